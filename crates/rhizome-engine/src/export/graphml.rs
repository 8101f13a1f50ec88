//! GraphML (http://graphml.graphdrawing.org/): one file Gephi, networkx and yEd open.
//! Every node has `label` (Document, Chunk, Entity, Fact) and the attributes of its kind;
//! every edge `type` and, where it has them, `weight`, `count`, `description` and
//! `rel_type` (the relation type as extracted).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rhizome_core::{Error, Result};

use super::{Edge, Snapshot};

/// Attribute keys: (id, for, type).
const KEYS: &[(&str, &str, &str)] = &[
    ("label", "node", "string"),
    ("name", "node", "string"),
    ("entity_type", "node", "string"),
    ("description", "node", "string"),
    ("importance", "node", "double"),
    ("title", "node", "string"),
    ("source", "node", "string"),
    ("language", "node", "string"),
    ("doc_id", "node", "string"),
    ("ordinal", "node", "int"),
    ("char_start", "node", "int"),
    ("char_end", "node", "int"),
    ("page_first", "node", "int"),
    ("page_last", "node", "int"),
    ("text", "node", "string"),
    ("subject", "node", "string"),
    ("predicate", "node", "string"),
    ("object", "node", "string"),
    ("type", "edge", "string"),
    ("rel_type", "edge", "string"),
    ("weight", "edge", "double"),
    ("count", "edge", "int"),
    ("edescription", "edge", "string"),
];

/// Text as XML character data: markup escaped, characters XML 1.0 forbids dropped.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => o.push(c),
        }
    }
    o
}

struct Out<W: Write>(W);

impl<W: Write> Out<W> {
    fn data(&mut self, key: &str, v: &str) -> std::io::Result<()> {
        write!(self.0, "<data key=\"{key}\">{}</data>", escape(v))
    }
    fn node(&mut self, id: &str, label: &str, attrs: &[(&str, String)]) -> std::io::Result<()> {
        write!(self.0, "<node id=\"{}\">", escape(id))?;
        self.data("label", label)?;
        for (k, v) in attrs {
            self.data(k, v)?;
        }
        writeln!(self.0, "</node>")
    }
}

pub(super) fn write(snap: &Snapshot, edges: &[Edge<'_>], out: &Path) -> Result<PathBuf> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let file = File::create(out).map_err(|e| Error::io(out, e))?;
    let mut w = Out(BufWriter::new(file));
    body(snap, edges, &mut w).map_err(|e| Error::io(out, e))?;
    w.0.flush().map_err(|e| Error::io(out, e))?;
    Ok(out.to_path_buf())
}

fn body<W: Write>(snap: &Snapshot, edges: &[Edge<'_>], w: &mut Out<W>) -> std::io::Result<()> {
    writeln!(w.0, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
    writeln!(w.0, "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">")?;
    for (id, what, ty) in KEYS {
        let name = if *id == "edescription" { "description" } else { id };
        writeln!(w.0, "<key id=\"{id}\" for=\"{what}\" attr.name=\"{name}\" attr.type=\"{ty}\"/>")?;
    }
    writeln!(w.0, "<graph id=\"rhizome\" edgedefault=\"directed\">")?;
    for d in &snap.documents {
        let mut a = vec![("title", d.title.clone()), ("source", d.source.clone())];
        if let Some(l) = &d.language {
            a.push(("language", l.clone()));
        }
        w.node(&d.id, "Document", &a)?;
    }
    for c in &snap.chunks {
        let mut a = vec![
            ("doc_id", c.doc_id.clone()),
            ("ordinal", c.ordinal.to_string()),
            ("char_start", c.start.to_string()),
            ("char_end", c.end.to_string()),
        ];
        if let Some(p) = c.pages {
            a.extend([("page_first", p.first.to_string()), ("page_last", p.last.to_string())]);
        }
        a.push(("text", c.text.clone()));
        w.node(&c.id, "Chunk", &a)?;
    }
    for e in &snap.entities {
        let mut a = vec![
            ("name", e.name.clone()),
            ("entity_type", e.entity_type.clone()),
            ("description", e.description.clone()),
        ];
        if let Some(i) = e.importance {
            a.push(("importance", i.to_string()));
        }
        w.node(&e.id, "Entity", &a)?;
    }
    for f in &snap.facts {
        w.node(
            &f.id,
            "Fact",
            &[("subject", f.subject.clone()), ("predicate", f.predicate.clone()), ("object", f.object.clone())],
        )?;
    }
    for (i, e) in edges.iter().enumerate() {
        write!(w.0, "<edge id=\"e{i}\" source=\"{}\" target=\"{}\">", escape(e.source), escape(e.target))?;
        w.data("type", &e.kind)?;
        if let Some(t) = e.rel_type {
            w.data("rel_type", t)?;
        }
        if let Some(x) = e.weight {
            w.data("weight", &x.to_string())?;
        }
        if let Some(n) = e.count {
            w.data("count", &n.to_string())?;
        }
        if let Some(d) = e.description.filter(|d| !d.is_empty()) {
            w.data("edescription", d)?;
        }
        writeln!(w.0, "</edge>")?;
    }
    writeln!(w.0, "</graph>")?;
    writeln!(w.0, "</graphml>")
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup_and_drops_forbidden_characters() {
        assert_eq!(super::escape("a<b & \"c\"\u{1}\n"), "a&lt;b &amp; &quot;c&quot;\n");
    }
}
