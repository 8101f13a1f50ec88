//! MaxScore against [`rank`] over every posting, on random small corpora: Zipf-like term
//! frequencies, passages repeated word for word (ties), lengths alike, every `k` from 1
//! to more than the corpus, absent and repeated terms, every tuning from "read the seed
//! only" to "probe everything".

use std::collections::HashMap;

use super::*;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Postings by term, counting what is read.
#[derive(Default)]
struct Memory {
    by_term: HashMap<String, Vec<(i64, u32)>>,
    read: usize,
}

impl PostingSource for Memory {
    type Error = std::convert::Infallible;

    fn df(&mut self, terms: &[&str]) -> Result<Vec<u64>, Self::Error> {
        Ok(terms.iter().map(|t| self.by_term.get(*t).map_or(0, |p| p.len() as u64)).collect())
    }

    fn postings(&mut self, terms: &[&str]) -> Result<Vec<Vec<(i64, u32)>>, Self::Error> {
        let out: Vec<Vec<(i64, u32)>> =
            terms.iter().map(|t| self.by_term.get(*t).cloned().unwrap_or_default()).collect();
        self.read += out.iter().map(Vec::len).sum::<usize>();
        Ok(out)
    }

    fn probe(&mut self, terms: &[&str], rows: &[i64]) -> Result<Vec<Vec<(i64, u32)>>, Self::Error> {
        let rows: std::collections::HashSet<i64> = rows.iter().copied().collect();
        let out: Vec<Vec<(i64, u32)>> = terms
            .iter()
            .map(|t| {
                self.by_term
                    .get(*t)
                    .map_or_else(Vec::new, |p| p.iter().copied().filter(|(r, _)| rows.contains(r)).collect())
            })
            .collect();
        self.read += out.iter().map(Vec::len).sum::<usize>();
        Ok(out)
    }
}

/// A corpus of `docs` chunks over `vocab` terms (term `i` drawn with weight ~ 1/(i+1)).
fn corpus(rng: &mut Rng, docs: usize, vocab: usize) -> (Memory, DocLengths) {
    let mut texts: Vec<Vec<String>> = Vec::new();
    let mut len = HashMap::new();
    let mut mem = Memory::default();
    let mut rowid = 0i64;
    for d in 0..docs {
        let words: Vec<String> = if d > 0 && rng.below(5) == 0 {
            // A passage again, word for word.
            texts[rng.below(d as u64) as usize].clone()
        } else {
            let short = rng.below(3) == 0;
            let n = 1 + rng.below(if short { 4 } else { 30 });
            (0..n).map(|_| format!("t{}", (vocab as f64).powf(rng.unit()) as usize - 1)).collect()
        };
        let mut tf: HashMap<&str, u32> = HashMap::new();
        for w in &words {
            *tf.entry(w).or_default() += 1;
        }
        rowid += 1 + rng.below(3) as i64;
        len.insert(rowid, words.len() as u32);
        for (t, n) in tf {
            mem.by_term.entry(t.to_string()).or_default().push((rowid, n));
        }
        texts.push(words);
    }
    (mem, DocLengths::from_map(len))
}

#[test]
fn maxscore_ranks_as_reading_every_posting() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut pruned = 0usize;
    for round in 0..300 {
        let docs = 1 + rng.below(if round % 4 == 0 { 20 } else { 600 }) as usize;
        let vocab = 2 + rng.below(120) as usize;
        let (mut mem, lengths) = corpus(&mut rng, docs, vocab);
        for _ in 0..8 {
            let nterms = 1 + rng.below(7) as usize;
            let mut words: Vec<String> =
                (0..nterms).map(|_| format!("t{}", ((vocab + 5) as f64).powf(rng.unit()) as usize - 1)).collect();
            if rng.below(4) == 0 {
                words.push("absent".into());
            }
            let terms = query_terms_of(&words);
            let k = [1, 2, 5, 10, 50, docs, docs + 7][rng.below(7) as usize];
            let tuning =
                Tuning { read_all_max: rng.below(3), seed_postings: rng.below(400), probe_ratio: 1 + rng.below(8) };
            let all: Vec<Vec<(i64, u32)>> =
                terms.iter().map(|t| mem.by_term.get(t).cloned().unwrap_or_default()).collect();
            let want = rank(&lengths, &all, k);
            mem.read = 0;
            let got = tuned(&mut mem, &lengths, &terms, k, tuning).unwrap();
            let bits = |v: &[(i64, f32)]| v.iter().map(|(r, s)| (*r, s.to_bits())).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "round {round} terms {terms:?} k {k} {tuning:?}");
            if mem.read < all.iter().map(Vec::len).sum::<usize>() {
                pruned += 1;
            }
        }
    }
    assert!(pruned > 100, "the pruning ran in {pruned} queries only");
}

#[test]
fn repeated_terms_are_scored_as_rank_scores_them() {
    let mut rng = Rng(7);
    let (mut mem, lengths) = corpus(&mut rng, 300, 20);
    let terms: Vec<String> = ["t0", "t3", "t0"].iter().map(|s| s.to_string()).collect();
    let all: Vec<Vec<(i64, u32)>> = terms.iter().map(|t| mem.by_term.get(t).cloned().unwrap_or_default()).collect();
    let tuning = Tuning { read_all_max: 0, seed_postings: 0, probe_ratio: 4 };
    assert_eq!(tuned(&mut mem, &lengths, &terms, 10, tuning).unwrap(), rank(&lengths, &all, 10));
}

/// Terms as a query gives them: sorted, distinct.
fn query_terms_of(words: &[String]) -> Vec<String> {
    let mut t = words.to_vec();
    t.sort();
    t.dedup();
    t
}
