//! CSV files for `neo4j-admin database import full`: one file per node label and one for
//! all relationships, headers in neo4j-admin's format (`id:ID`, `:LABEL`, `:START_ID`,
//! `:END_ID`, `:TYPE`, typed properties), every field quoted, and `import.sh` with the
//! command that loads them (text fields hold line breaks: `--multiline-fields=true`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rhizome_core::{Error, Result};

use super::{type_label, Edge, Snapshot};

/// A CSV field: always quoted, quotes doubled.
pub fn field(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

struct Csv {
    path: PathBuf,
    w: BufWriter<File>,
}

impl Csv {
    fn create(dir: &Path, name: &str, header: &[&str]) -> Result<Csv> {
        let path = dir.join(name);
        let f = File::create(&path).map_err(|e| Error::io(&path, e))?;
        let mut c = Csv { path, w: BufWriter::new(f) };
        c.row(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>())?;
        Ok(c)
    }
    fn row(&mut self, fields: &[String]) -> Result<()> {
        let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
        writeln!(self.w, "{}", line.join(",")).map_err(|e| Error::io(&self.path, e))
    }
    fn finish(mut self) -> Result<PathBuf> {
        self.w.flush().map_err(|e| Error::io(&self.path, e))?;
        Ok(self.path)
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

pub(super) fn write(snap: &Snapshot, edges: &[Edge<'_>], dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Err(Error::bad_input(
            "--out",
            format!("{} is a file; neo4j-csv writes a folder of CSV files: give a folder path", dir.display()),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut files = Vec::new();

    let mut docs = Csv::create(dir, "documents.csv", &["id:ID", "title", "source", "language", ":LABEL"])?;
    for d in &snap.documents {
        docs.row(&[d.id.clone(), d.title.clone(), d.source.clone(), opt(d.language.clone()), "Document".into()])?;
    }
    files.push(docs.finish()?);

    let mut chunks = Csv::create(
        dir,
        "chunks.csv",
        &[
            "id:ID",
            "doc_id",
            "ordinal:int",
            "text",
            "tokens:int",
            "char_start:int",
            "char_end:int",
            "page_first:int",
            "page_last:int",
            ":LABEL",
        ],
    )?;
    for c in &snap.chunks {
        chunks.row(&[
            c.id.clone(),
            c.doc_id.clone(),
            c.ordinal.to_string(),
            c.text.clone(),
            c.tokens.to_string(),
            c.start.to_string(),
            c.end.to_string(),
            opt(c.pages.map(|p| p.first.to_string())),
            opt(c.pages.map(|p| p.last.to_string())),
            "Chunk".into(),
        ])?;
    }
    files.push(chunks.finish()?);

    let mut ents = Csv::create(
        dir,
        "entities.csv",
        &["id:ID", "name", "entity_type", "description", "importance:float", ":LABEL"],
    )?;
    for e in &snap.entities {
        let labels = match type_label(&e.entity_type) {
            Some(l) => format!("__Entity__;{l}"),
            None => "__Entity__".into(),
        };
        ents.row(&[
            e.id.clone(),
            e.name.clone(),
            e.entity_type.clone(),
            e.description.clone(),
            opt(e.importance),
            labels,
        ])?;
    }
    files.push(ents.finish()?);

    let mut facts = Csv::create(dir, "facts.csv", &["id:ID", "subject", "predicate", "object", ":LABEL"])?;
    for f in &snap.facts {
        facts.row(&[f.id.clone(), f.subject.clone(), f.predicate.clone(), f.object.clone(), "Fact".into()])?;
    }
    files.push(facts.finish()?);

    let mut rels = Csv::create(
        dir,
        "relationships.csv",
        &[":START_ID", ":END_ID", ":TYPE", "weight:float", "count:int", "description", "rel_type"],
    )?;
    for e in edges {
        rels.row(&[
            e.source.to_string(),
            e.target.to_string(),
            e.kind.clone(),
            opt(e.weight),
            opt(e.count),
            e.description.unwrap_or_default().to_string(),
            e.rel_type.unwrap_or_default().to_string(),
        ])?;
    }
    files.push(rels.finish()?);

    let script = dir.join("import.sh");
    std::fs::write(&script, IMPORT_SH).map_err(|e| Error::io(&script, e))?;
    files.push(script);
    Ok(files)
}

const IMPORT_SH: &str = "#!/bin/sh
# Load this folder into a new Neo4j database (Neo4j 5: stop the database first).
#   sh import.sh [DATABASE]      (default: neo4j)
# Written by `rhizome export --format neo4j-csv`.
set -e
cd \"$(dirname \"$0\")\"
neo4j-admin database import full \"${1:-neo4j}\" \\
  --nodes=documents.csv --nodes=chunks.csv --nodes=entities.csv --nodes=facts.csv \\
  --relationships=relationships.csv \\
  --multiline-fields=true --overwrite-destination
";

#[cfg(test)]
mod tests {
    #[test]
    fn fields_are_quoted_with_quotes_doubled() {
        assert_eq!(super::field("say \"hi\", twice\n"), "\"say \"\"hi\"\", twice\n\"");
    }
}
