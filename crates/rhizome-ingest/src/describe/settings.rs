//! `[describe]`: what describing a document after indexing makes (a summary, a type,
//! hashtags) and from how much of it.

use rhizome_core::section;

section! {
    "describe",
    /// Documents described after indexing: a summary, a type and hashtags.
    pub struct DescribeConfig {
        /// Describe each new document at the end of `rhizome index` (false: documents keep
        /// only what their files say; `rhizome describe` describes them later).
        pub enabled: bool = true,
        /// Sentences of an extractive summary (no LLM). Valid: an integer from 1 to 20.
        pub summary_sentences: usize = 3 => int(1, 20),
        /// Most characters of a summary. Valid: an integer from 40 to 10000.
        pub summary_max_chars: usize = 600 => int(40, 10_000),
        /// Hashtags (keyphrases) per document. Valid: an integer from 0 to 50.
        pub hashtags: usize = 5 => int(0, 50),
        /// Describe with the configured LLM, one cached call per document (false: always
        /// extractive, even with an LLM).
        pub llm: bool = true,
        /// Characters of a document's beginning the LLM reads to describe it.
        /// Valid: an integer from 200 to 200000.
        pub llm_max_chars: usize = 6000 => int(200, 200_000),
        /// The document types, each `name: what such a document is`. Without an LLM a
        /// document gets the type whose description its text is closest to (by
        /// embedding); e-mail, slides, spreadsheets and e-books get theirs by format when
        /// the list has it. A type named `other` is given only when nothing else fits.
        pub types: Vec<String> = default_types(),
    }
    impl {
        const FREE_TEXT: &'static [&'static str] = &["describe.types"];
    }
}

fn default_types() -> Vec<String> {
    [
        "report: a report presenting findings, results, figures or the state of a project, an inspection or an organisation",
        "contract: a contract or agreement between parties, with obligations, terms, clauses and signatures",
        "article: a news, magazine or encyclopedia article about events, people or places",
        "manual: a manual, guide or technical documentation explaining how to install, configure or use something",
        "paper: a scientific or academic paper with an abstract, methods, experiments, results and references",
        "email: an e-mail message from a sender to recipients",
        "slides: a slide presentation of short points",
        "spreadsheet: a spreadsheet or table of rows and columns of data",
        "book: a book with chapters covering a subject or telling a story at length",
        "other: any other document",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// One document type: its name (lower case) and its description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocType {
    pub name: String,
    pub description: String,
}

impl DescribeConfig {
    /// [`DescribeConfig::types`] read as names and descriptions (an entry without `:` is a
    /// name that describes itself); empty names are left out, a name given twice keeps
    /// its first description.
    pub fn doc_types(&self) -> Vec<DocType> {
        let mut out: Vec<DocType> = Vec::new();
        for t in &self.types {
            let (name, description) = t.split_once(':').unwrap_or((t, t));
            let name = name.trim().to_lowercase();
            if !name.is_empty() && !out.iter().any(|d| d.name == name) {
                out.push(DocType { name, description: description.trim().to_string() });
            }
        }
        out
    }
}
