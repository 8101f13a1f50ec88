//! The cue lists one language has: the [`Cues`] type every language fills in.

/// The cue lists of one language.
pub(crate) struct Cues {
    /// The question sets things side by side.
    pub comparative: &'static [&'static str],
    /// With two names or more: the names are set side by side ("both", "the same").
    pub pair: &'static [&'static str],
    /// The question asks why / how / for effects or explanations.
    pub analytical: &'static [&'static str],
    /// The question is about the corpus as a whole (themes, overview).
    pub thematic: &'static [&'static str],
    /// Question words of factual questions.
    pub factual: &'static [&'static str],
    /// Relative-clause markers (a second hop hangs off a noun).
    pub relative: &'static [&'static str],
    /// Possessive links (`of`, `của`, `的`): two or more make a chain.
    pub possessive: &'static [&'static str],
    /// The question asks how two named things are connected (a path between them).
    pub relation: &'static [&'static str],
    /// Clause and list conjunctions.
    pub conjunction: &'static [&'static str],
    /// Openers or closers of elliptical follow-ups ("what about ...", "còn ... thì sao",
    /// "...呢"), longest first.
    pub follow_open: &'static [&'static str],
    pub follow_close: &'static [&'static str],
    /// Pronouns that refer to a person, then to anything; possessive determiners.
    pub pronoun_person: &'static [&'static str],
    pub pronoun_other: &'static [&'static str],
    pub pronoun_possessive: &'static [&'static str],
    /// Words that are never key concepts (question words, auxiliaries, imperatives). For
    /// Chinese they also split character runs into terms, so single characters that often
    /// sit inside words (中, 要, 会...) are left out.
    pub function: &'static [&'static str],
}
