//! Chinese word segmentation and part-of-speech tags with jieba (the dictionary is
//! embedded in the binary; it is loaded once, on first use, in about 0.2 s).

use std::sync::LazyLock;

use jieba_rs::Jieba;

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// A word of Chinese text with its jieba part-of-speech tag (ICTCLAS tag set: `nr`
/// person, `ns` place, `nt` organisation, `nz` other proper noun, `n` noun, `v` verb,
/// `eng` a Latin-script word, `m` number, `x` punctuation or space...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaggedWord<'a> {
    /// The word, a slice of the input.
    pub word: &'a str,
    /// Byte offset of the word in the input.
    pub start: usize,
    /// Byte offset just past the word.
    pub end: usize,
    /// Part-of-speech tag.
    pub tag: &'static str,
}

/// Words of `text` (Chinese, possibly mixed with Latin words), in order, with the
/// dictionary plus the HMM for words the dictionary lacks. Whitespace and punctuation
/// come out as words of their own.
pub fn segment(text: &str) -> Vec<&str> {
    JIEBA.cut(text, true).into_iter().map(|t| t.word).collect()
}

/// Words of `text` for search: each word, and also the dictionary words inside long words
/// (`中国人民银行` gives `中国`, `人民`, `银行` and itself), so that a query matches a text
/// whichever way each of them was cut.
pub fn segment_for_search(text: &str) -> Vec<&str> {
    JIEBA.cut_for_search(text, true).into_iter().map(|t| t.word).collect()
}

/// Words of `text` with their part-of-speech tags, in order.
pub fn tag(text: &str) -> Vec<TaggedWord<'_>> {
    JIEBA
        .tag(text, true)
        .into_iter()
        .map(|t| TaggedWord { word: t.word, start: t.byte_start, end: t.byte_end, tag: static_tag(t.tag) })
        .collect()
}

/// The tag as a `'static` string (jieba's tags live as long as the static segmenter).
fn static_tag(tag: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "nr", "nrt", "nrfg", "ns", "nt", "nz", "n", "ng", "nd", "nh", "ni", "nl", "v", "vn", "vd", "a", "ad", "an",
        "d", "m", "mq", "q", "r", "p", "c", "u", "uj", "ul", "uz", "ug", "uv", "ud", "y", "e", "o", "f", "s", "t",
        "tg", "b", "z", "l", "i", "j", "k", "h", "g", "x", "eng", "zg", "df", "dg", "ag", "rr", "rz", "rg", "vg", "vq",
        "vi", "yg", "mg",
    ];
    KNOWN.iter().find(|k| **k == tag).copied().unwrap_or("x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_and_tags_names() {
        let w = segment("Sam Altman领导的公司在AI领域有什么重要投资？");
        assert!(w.contains(&"领导") && w.contains(&"公司") && w.contains(&"投资"), "{w:?}");
        let s = segment_for_search("北京大学的研究人员在中国人民银行发表报告");
        assert!(s.contains(&"北京大学") && s.contains(&"银行"), "{s:?}");
        let t = tag("公司总部位于旧金山，由Sam Altman领导。北京大学的研究人员");
        assert!(t.iter().any(|x| x.word == "旧金山" && x.tag == "ns"), "{t:?}");
        assert!(t.iter().any(|x| x.word == "北京大学" && x.tag == "nt"), "{t:?}");
        assert!(t.iter().any(|x| x.word == "Altman" && x.tag == "eng"), "{t:?}");
        let text = "公司总部位于旧金山";
        assert!(tag(text).iter().all(|x| &text[x.start..x.end] == x.word));
    }
}
