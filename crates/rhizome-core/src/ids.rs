//! Content-hash ids. Same content, same id: re-indexing unchanged input is a no-op.

use sha2::{Digest, Sha256};

/// `prefix` + first 16 hex digits of SHA-256 over the parts, separated by a unit separator.
pub fn content_id(prefix: &str, parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update([0x1f]);
        }
        h.update(p.as_bytes());
    }
    let d = h.finalize();
    let mut s = String::with_capacity(prefix.len() + 16);
    s.push_str(prefix);
    for b in &d[..8] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Normalised form of a name used to merge entities: Unicode-lowercased, whitespace
/// collapsed, surrounding punctuation trimmed. Diacritics are kept (Vietnamese needs them).
pub fn normalize_name(name: &str) -> String {
    let lowered = name.to_lowercase();
    let collapsed = lowered.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.trim_matches(|c: char| !c.is_alphanumeric()).to_string()
}

pub fn document_id(title: &str, text: &str) -> String {
    content_id("doc_", &[title, text])
}

/// The digest of a document's text alone (not its title or name): the same content under
/// two names has one digest, so a store indexes it once.
pub fn text_digest(text: &str) -> String {
    content_id("txt_", &[text])
}

pub fn chunk_id(doc_id: &str, ordinal: u32, text: &str) -> String {
    content_id("chk_", &[doc_id, &ordinal.to_string(), text])
}

/// The id of a sentence's vector: its chunk's id, `#`, a hash of the sentence. The hash
/// (not the sentence's place) ties the vector to the words it was pooled from: a reader
/// that splits a chunk differently finds no vector and embeds the sentence itself.
pub fn sentence_id(chunk_id: &str, sentence: &str) -> String {
    content_id(&format!("{chunk_id}#"), &[sentence])
}

/// The bytewise range `[low, high)` that holds every [`sentence_id`] of a chunk (`#` is
/// 0x23, `$` 0x24): what a store deletes or reads by, with its (kind, id) key.
pub fn sentence_id_range(chunk_id: &str) -> (String, String) {
    (format!("{chunk_id}#"), format!("{chunk_id}$"))
}

pub fn entity_id(name: &str) -> String {
    content_id("ent_", &[&normalize_name(name)])
}

pub fn fact_id(s: &str, p: &str, o: &str) -> String {
    content_id("fact_", &[&normalize_name(s), &normalize_name(p), &normalize_name(o)])
}

pub fn relation_id(source_id: &str, rel_type: &str, target_id: &str) -> String {
    content_id("rel_", &[source_id, &normalize_name(rel_type), target_id])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_normalised() {
        assert_eq!(entity_id("Aage  Bohr"), entity_id("aage bohr"));
        assert_eq!(entity_id("\"OpenAI\""), entity_id("openai"));
        assert_ne!(entity_id("Đà Nẵng"), entity_id("Da Nang"));
        assert!(document_id("t", "x").starts_with("doc_"));
        assert_eq!(document_id("t", "x").len(), 4 + 16);
        assert_ne!(document_id("ab", "c"), document_id("a", "bc"));
    }
}
