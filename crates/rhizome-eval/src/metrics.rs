//! Metrics.

use crate::PassageKey;

/// HippoRAG's Recall@k: the fraction of a question's supporting passages found among the
/// first `k` retrieved documents `(title, text)`. A question with no supporting passage
/// counts as 1 (nothing to find).
pub fn recall_at_k(supporting: &[PassageKey], retrieved: &[(String, String)], k: usize) -> f64 {
    if supporting.is_empty() {
        return 1.0;
    }
    let top = &retrieved[..k.min(retrieved.len())];
    let found = supporting.iter().filter(|s| top.iter().any(|(title, text)| s.matches(title, text))).count();
    found as f64 / supporting.len() as f64
}

/// The `p`-th percentile (0..=100) by nearest rank of unsorted values; 0 for none.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// SQuAD answer normalisation: lowercase, drop punctuation and articles, squash spaces.
fn normalize(s: &str) -> Vec<String> {
    let lower: String =
        s.to_lowercase().chars().map(|c| if c.is_alphanumeric() || c.is_whitespace() { c } else { ' ' }).collect();
    lower.split_whitespace().filter(|w| !matches!(*w, "a" | "an" | "the")).map(str::to_string).collect()
}

/// 1.0 if the prediction equals any gold answer after normalisation.
pub fn exact_match(pred: &str, golds: &[String]) -> f64 {
    let p = normalize(pred);
    if golds.iter().any(|g| normalize(g) == p) {
        1.0
    } else {
        0.0
    }
}

/// 1.0 if some gold answer appears in the prediction as a run of whole words, after
/// normalisation. For extractive answers (sentences) F1 is diluted by the sentence's other
/// words and EM is always 0; this says whether the answer holds the gold at all.
pub fn contains_gold(pred: &str, golds: &[String]) -> f64 {
    let p = normalize(pred);
    let hit = golds.iter().any(|g| {
        let g = normalize(g);
        !g.is_empty() && p.windows(g.len()).any(|w| w == g.as_slice())
    });
    if hit {
        1.0
    } else {
        0.0
    }
}

/// Best token F1 of the prediction against the gold answers.
pub fn f1(pred: &str, golds: &[String]) -> f64 {
    let p = normalize(pred);
    golds
        .iter()
        .map(|g| {
            let g = normalize(g);
            let mut pool = g.clone();
            let mut common = 0usize;
            for t in &p {
                if let Some(i) = pool.iter().position(|x| x == t) {
                    pool.swap_remove(i);
                    common += 1;
                }
            }
            if common == 0 {
                return 0.0;
            }
            let prec = common as f64 / p.len() as f64;
            let rec = common as f64 / g.len() as f64;
            2.0 * prec * rec / (prec + rec)
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_behave() {
        let sup = vec![
            PassageKey { title: "A".into(), text: Some("x  y".into()) },
            PassageKey { title: "B".into(), text: None },
        ];
        let got = vec![("A".to_string(), "x y".to_string()), ("C".into(), "".into()), ("B".into(), "z".into())];
        assert_eq!(recall_at_k(&sup, &got, 2), 0.5);
        assert_eq!(recall_at_k(&sup, &got, 5), 1.0);
        assert_eq!(percentile(&[3.0, 1.0, 2.0, 4.0], 50.0), 2.0);
        assert_eq!(percentile(&[3.0, 1.0, 2.0, 4.0], 95.0), 4.0);
        assert_eq!(exact_match("The Eiffel Tower!", &["eiffel tower".into()]), 1.0);
        assert!((f1("Paris France", &["Paris".into()]) - 2.0 / 3.0).abs() < 1e-9);
        let golds = ["Gustave Eiffel".to_string(), "Eiffel".to_string()];
        assert_eq!(contains_gold("It was designed by Gustave Eiffel's firm. [1]", &golds), 1.0);
        assert_eq!(contains_gold("Designed by the Eiffelturm company.", &golds), 0.0, "whole words only");
        assert_eq!(contains_gold("anything", &["".to_string()]), 0.0);
    }

    #[test]
    fn reads_shared_question_sets() {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        if !base.exists() {
            panic!("shared data missing at {}: clone the repo beside shared/", base.display());
        }
        let m = crate::load_questions(&base.join("musique/musique_train.json")).unwrap();
        assert_eq!(m.len(), 100);
        assert!(m.iter().all(|q| q.supporting.len() >= 2 && q.supporting[0].text.is_some()));
        let h = crate::load_questions(&base.join("hotpotqa/hotpotqa_train.json")).unwrap();
        assert_eq!(h.len(), 100);
        assert!(h.iter().all(|q| q.supporting.len() >= 2 && q.supporting[0].text.is_none()));
    }
}
