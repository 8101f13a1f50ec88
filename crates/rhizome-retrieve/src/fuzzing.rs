//! Entry points for the fuzzer (crates/rhizome-fuzz): every parser of a model reply in
//! this crate, fed untrusted text. Not an API: hidden from the docs, may change.

/// Run every reply parser of this crate on `reply` (`n`: the candidates or passages the
/// reply is about; `question`: the question it answers). Returns how many items they
/// found in total, so that nothing is optimised away.
pub fn reply_parsers(reply: &str, n: usize, question: &str) -> usize {
    let mut found = 0;
    found += crate::global::points::parse_points(reply, n).map_or(0, |p| p.len());
    found += crate::tog::prune::parse_scores(reply, n).map_or(0, |s| s.len());
    found += crate::tog::judge::parse_verdict(reply).is_some() as usize;
    found += crate::hippo::parse_kept(reply, n).map_or(0, |k| k.len());
    found += crate::multipath::rerank::parse_ranking(reply, n).len();
    found += crate::query_entities::parse_llm_names(reply, question).map_or(0, |v| v.len());
    for key in ["intermediate_answer", "response", ""] {
        found += crate::drift::parse::parse_step(reply, key).is_ok() as usize;
    }
    found += crate::drift::parse::preview(reply).len();
    found += crate::analyze::json_value(reply).is_some() as usize;
    found
}
