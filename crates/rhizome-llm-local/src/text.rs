//! Pure text helpers of the decode loop: incremental UTF-8 decoding of token pieces, stop
//! strings with held-back streaming, and the ChatML fallback prompt. No llama.cpp here, so
//! all of it is unit-tested without a model.

use rhizome_core::llm::{ChatMessage, Role};

/// Turns token pieces (raw bytes) into text. A piece may end inside a multi-byte UTF-8
/// character (byte-level BPE splits them); those bytes wait for the next piece. Invalid
/// bytes become U+FFFD instead of failing.
#[derive(Debug, Default)]
pub(crate) struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// Append `bytes` and return the text they complete (possibly empty).
    pub(crate) fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // SAFETY-free: `valid_up_to` bytes are valid UTF-8 by definition.
                    out.push_str(std::str::from_utf8(&self.pending[..valid]).unwrap_or_default());
                    match e.error_len() {
                        // An incomplete character at the end: keep it for the next piece.
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                        // Invalid bytes: replace them and go on.
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + bad);
                        }
                    }
                }
            }
        }
    }

    /// The text of whatever is left at the end of generation (an unfinished character
    /// becomes U+FFFD).
    pub(crate) fn finish(&mut self) -> String {
        let s = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        s
    }
}

/// Accumulates generated text, detects stop strings, and says how much of the text is safe
/// to stream: text that could still turn out to be the start of a stop string is held back
/// until it is known not to be one, so no part of a stop string is ever streamed.
#[derive(Debug)]
pub(crate) struct StopText {
    stops: Vec<String>,
    text: String,
    streamed: usize,
    stopped: bool,
}

impl StopText {
    /// Empty stop strings are ignored (they would match at once).
    pub(crate) fn new(stops: &[String]) -> Self {
        let stops = stops.iter().filter(|s| !s.is_empty()).cloned().collect();
        StopText { stops, text: String::new(), streamed: 0, stopped: false }
    }

    /// Add generated text. Returns the newly streamable text; after a stop string was found
    /// the text is cut before it and [`Self::stopped`] is true.
    pub(crate) fn push(&mut self, piece: &str) -> &str {
        if self.stopped || piece.is_empty() {
            return "";
        }
        let old_len = self.text.len();
        self.text.push_str(piece);
        let longest = self.stops.iter().map(|s| s.len()).max().unwrap_or(0);
        // A new match must end in the new piece, so it starts at most `longest - 1` bytes
        // before it.
        let mut from = old_len.saturating_sub(longest.saturating_sub(1));
        while !self.text.is_char_boundary(from) {
            from -= 1;
        }
        let hit = self.stops.iter().filter_map(|s| self.text[from..].find(s.as_str())).min();
        let safe = if let Some(at) = hit {
            self.text.truncate(from + at);
            self.stopped = true;
            self.text.len()
        } else {
            self.text.len() - self.partial_stop_suffix()
        };
        let start = self.streamed.min(safe);
        self.streamed = safe.max(self.streamed);
        &self.text[start..safe]
    }

    /// Flush the held-back text at the end of generation; returns it.
    pub(crate) fn finish(&mut self) -> &str {
        let start = self.streamed.min(self.text.len());
        self.streamed = self.text.len();
        &self.text[start..]
    }

    /// Whether a stop string was found.
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }

    pub(crate) fn into_text(self) -> String {
        self.text
    }

    /// Length of the longest suffix of the text that is a proper prefix of a stop string.
    fn partial_stop_suffix(&self) -> usize {
        let mut best = 0;
        for stop in &self.stops {
            let max = (stop.len() - 1).min(self.text.len());
            for n in (best + 1..=max).rev() {
                let start = self.text.len() - n;
                if self.text.is_char_boundary(start) && stop.as_bytes().starts_with(&self.text.as_bytes()[start..]) {
                    best = n;
                    break;
                }
            }
        }
        best
    }
}

/// The role name a chat template expects.
pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// ChatML rendering (`<|im_start|>role\ncontent<|im_end|>\n` ..., then the open assistant
/// turn): the fallback for a GGUF without a chat template that llama.cpp recognises.
pub(crate) fn chatml(messages: &[ChatMessage]) -> String {
    let mut out = String::new();
    for m in messages {
        out.push_str("<|im_start|>");
        out.push_str(role_name(m.role));
        out.push('\n');
        out.push_str(&m.content);
        out.push_str("<|im_end|>\n");
    }
    out.push_str("<|im_start|>assistant\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_split_across_pieces() {
        let mut d = Utf8Decoder::default();
        let bytes = "é😀x".as_bytes();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&d.push(std::slice::from_ref(b)));
        }
        assert_eq!(out, "é😀x");
        assert_eq!(d.finish(), "");
        // An invalid byte in the middle becomes U+FFFD; an unfinished char at the end too.
        assert_eq!(d.push(b"a\xffb"), "a\u{fffd}b");
        assert_eq!(d.push(&"😀".as_bytes()[..2]), "");
        assert_eq!(d.finish(), "\u{fffd}");
    }

    fn run(stops: &[&str], pieces: &[&str]) -> (String, String, bool) {
        let stops: Vec<String> = stops.iter().map(|s| s.to_string()).collect();
        let mut st = StopText::new(&stops);
        let mut streamed = String::new();
        for p in pieces {
            streamed.push_str(st.push(p));
            if st.stopped() {
                break;
            }
        }
        streamed.push_str(st.finish());
        let stopped = st.stopped();
        (streamed, st.into_text(), stopped)
    }

    #[test]
    fn stop_strings_are_cut_and_never_streamed() {
        // Stop string split across pieces.
        let (s, t, stopped) = run(&["END"], &["hello E", "N", "D more"]);
        assert_eq!((s.as_str(), t.as_str(), stopped), ("hello ", "hello ", true));
        // A partial match that turns out not to be a stop is streamed later.
        let (s, t, stopped) = run(&["END"], &["hello EN", "X bye"]);
        assert_eq!((s.as_str(), t.as_str(), stopped), ("hello ENX bye", "hello ENX bye", false));
        // Earliest of several stops wins; a stop inside one piece.
        let (s, t, _) = run(&["\n\n", "b"], &["a\n\nb"]);
        assert_eq!((s.as_str(), t.as_str()), ("a", "a"));
        // No stops: everything streams at once; empty stop ignored.
        let (s, t, stopped) = run(&[""], &["x", "y"]);
        assert_eq!((s.as_str(), t.as_str(), stopped), ("xy", "xy", false));
        // Multi-byte text around a stop.
        let (s, t, _) = run(&["ü!"], &["größer ü", "!x"]);
        assert_eq!((s.as_str(), t.as_str()), ("größer ", "größer "));
    }

    #[test]
    fn chatml_fallback() {
        let p = chatml(&[ChatMessage::system("S"), ChatMessage::user("U")]);
        assert_eq!(p, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
    }
}
