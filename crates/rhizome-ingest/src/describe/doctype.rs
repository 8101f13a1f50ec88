//! A document's type without an LLM: by its format where that says it (an e-mail, a
//! slide deck), else the configured type whose description its text is closest to.
//!
//! Closest: the cosine of the document's vector (the mean of its chunks' vectors) with a
//! description's vector (embedded as a passage, like the chunks), less that
//! description's cosine with the mean of all descriptions. Small embedders place some
//! descriptions near every text ("a table of rows and columns"); without the correction
//! they take most documents. Types a format decides (e-mail, slides, spreadsheet) are
//! not matched by content.

use rhizome_core::{dot, l2_normalize, EmbedKind, Embedder, Result};

use super::settings::DocType;

/// The type a media type implies, where the configured list has a type of that name.
const BY_MEDIA_TYPE: &[(&str, &str)] = &[
    ("message/rfc822", "email"),
    ("application/vnd.openxmlformats-officedocument.presentationml.presentation", "slides"),
    ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "spreadsheet"),
    ("application/vnd.oasis.opendocument.spreadsheet", "spreadsheet"),
    ("text/csv", "spreadsheet"),
    ("application/epub+zip", "book"),
];

/// The name of the fallback type, given when nothing else fits.
const OTHER: &str = "other";

/// The types only a format gives.
const FORMAT_ONLY: &[&str] = &["email", "slides", "spreadsheet"];

/// The configured types with their descriptions' vectors, embedded once per run.
pub struct TypeChooser {
    /// Every configured type but `other`.
    names: Vec<String>,
    /// The types matched by content, their descriptions' vectors and how near each is to
    /// all descriptions.
    matched: Vec<(String, Vec<f32>, f32)>,
    has_other: bool,
}

impl TypeChooser {
    /// Embeds the descriptions of the types matched by content.
    pub fn new(types: &[DocType], embedder: &dyn Embedder) -> Result<TypeChooser> {
        let by_content: Vec<&DocType> =
            types.iter().filter(|t| t.name != OTHER && !FORMAT_ONLY.contains(&t.name.as_str())).collect();
        let texts: Vec<String> = by_content.iter().map(|t| format!("{}: {}", t.name, t.description)).collect();
        let vectors = if texts.is_empty() { Vec::new() } else { embedder.embed(&texts, EmbedKind::Passage)? };
        let mean = centroid(vectors.iter().map(Vec::as_slice)).unwrap_or_default();
        let matched = by_content
            .iter()
            .zip(vectors)
            .map(|(t, v)| {
                let hub = if mean.len() == v.len() { dot(&v, &mean) } else { 0.0 };
                (t.name.clone(), v, hub)
            })
            .collect();
        Ok(TypeChooser {
            names: types.iter().filter(|t| t.name != OTHER).map(|t| t.name.clone()).collect(),
            matched,
            has_other: types.iter().any(|t| t.name == OTHER),
        })
    }

    /// Whether `name` is one of the configured types.
    pub fn knows(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name) || (self.has_other && name == OTHER)
    }

    /// The type of a document of `media_type` whose chunk vectors average to `centroid`
    /// (None: it has no vectors); None when no type is configured.
    pub fn choose(&self, media_type: Option<&str>, centroid: Option<&[f32]>) -> Option<String> {
        if let Some(t) = media_type
            .and_then(|m| BY_MEDIA_TYPE.iter().find(|(mt, _)| *mt == m))
            .map(|(_, t)| *t)
            .filter(|t| self.names.iter().any(|n| n == t))
        {
            return Some(t.to_string());
        }
        let best = centroid.and_then(|c| {
            let mut c = c.to_vec();
            l2_normalize(&mut c);
            self.matched
                .iter()
                .filter(|(_, v, _)| v.len() == c.len())
                .map(|(name, v, hub)| (name, dot(&c, v) - hub))
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(a.0)))
                .map(|(name, _)| name.clone())
        });
        best.or_else(|| self.has_other.then(|| OTHER.to_string()))
    }
}

/// The mean of `vectors` (None when there are none or their lengths differ).
pub fn centroid<'a>(vectors: impl IntoIterator<Item = &'a [f32]>) -> Option<Vec<f32>> {
    let mut sum: Option<Vec<f32>> = None;
    let mut n = 0usize;
    for v in vectors {
        match &mut sum {
            None => sum = Some(v.to_vec()),
            Some(s) if s.len() == v.len() => s.iter_mut().zip(v).for_each(|(a, b)| *a += b),
            Some(_) => return None,
        }
        n += 1;
    }
    sum.map(|s| s.into_iter().map(|x| x / n as f32).collect())
}
