//! The best `k` chunks of a query without reading every posting of its frequent terms
//! (MaxScore), with the very ranking [`super::rank`] gives over all postings.
//!
//! Each term `t` has an upper bound on what it can add to any chunk's score:
//! `ub_t = idf_t * (k1 + 1)`, the limit of `idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b *
//! dl / avg))` as `tf` grows, for every length (`1 - b + b * dl / avg >= 1 - b > 0`, so the
//! denominator is above `tf`). Every contribution is positive (the idf of every term is
//! checked to be; otherwise everything is read).
//!
//! 1. Seed: the rarest terms are read whole (at least the rarest; more while cheap or while
//!    they hold fewer than `k` chunks); their best chunks are probed for the other terms,
//!    so their scores are exact; `θ` = the `k`-th best of those scores (0 if fewer).
//! 2. Terms by `ub` ascending: the non-essential ones are the longest prefix whose `ub`
//!    sum is below `θ (1 - slack)`; every other term is read whole.
//! 3. Candidates: the chunks in the postings read whole, each with its partial score over
//!    the terms known so far. Then, before each non-essential term (largest `ub` first)
//!    and once after the last: `θ` rises to the `k`-th best partial when that is higher
//!    (a chunk's score is at least its partial); a candidate whose partial plus the `ub`
//!    of the terms still unknown is below `θ (1 - slack)` is dropped; the term is probed
//!    for the candidates left (or read whole when they are many) and added to their
//!    partials. The survivors are scored exactly as `rank` scores (contributions added in
//!    term order from 0, the same `f32` operations, the true df), sorted as `rank` sorts
//!    (score descending, rowid ascending) and cut at `k`.
//!
//! Why this is `rank`'s answer: `θ` is, at every step, at most the exact score of each of
//! `k` distinct chunks that stay to the end (the seeds' exact scores, or candidates'
//! partials, which their exact scores are at least, up to rounding; a chunk whose
//! partial is at least `θ` is never dropped, and `θ` only rises). A chunk left out is
//! either in none of the postings read whole, so every term it holds is non-essential and
//! its score is at most their `ub` sum, or a candidate whose partial plus the `ub` of the
//! terms it was not yet looked up in is below `θ (1 - slack)`. Either way its exact score
//! is below `θ (1 - slack)` before rounding; `slack` (at least 1e-4, and 8 ulps of `f32`
//! per term) is far above what rounding moves sums of at most `m` positive `f32` terms by
//! (`m * 2^-24` relatively), so its computed score is strictly below the computed scores
//! of those `k` chunks: it is in no top `k` whatever the ties, and the chunks kept hold
//! the top `k`, each scored exactly.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{best, contribution, idf, rank, DocLengths, K1};

/// Postings (chunk rowid, tf) of terms, as a backend holds them.
pub trait PostingSource {
    type Error;
    /// How many chunks hold each term (0 for a term none holds).
    fn df(&mut self, terms: &[&str]) -> Result<Vec<u64>, Self::Error>;
    /// Every posting of each term.
    fn postings(&mut self, terms: &[&str]) -> Result<Vec<Vec<(i64, u32)>>, Self::Error>;
    /// The postings of each term in the chunks `rows` only.
    fn probe(&mut self, terms: &[&str], rows: &[i64]) -> Result<Vec<Vec<(i64, u32)>>, Self::Error>;
}

static READ_ALL_MAX: AtomicU64 = AtomicU64::new(20_000);

/// Below this many postings of a query's terms in all, they are all read (that costs
/// less than the extra reads); a backend may also read them all below this many chunks.
pub fn read_all_max() -> u64 {
    READ_ALL_MAX.load(Ordering::Relaxed)
}

/// Change [`read_all_max`] for this process (tests exercise the pruning on small data).
pub fn set_read_all_max(n: u64) {
    READ_ALL_MAX.store(n, Ordering::Relaxed);
}

/// How much is read whole: tests vary it.
#[derive(Debug, Clone, Copy)]
struct Tuning {
    read_all_max: u64,
    /// The rarest terms are read whole for the seed while their postings stay below this.
    seed_postings: u64,
    /// A term is read whole rather than probed when this many times the rows to probe
    /// reach its postings.
    probe_ratio: u64,
}

/// The best `k` chunks for `terms` (distinct, in [`super::query_terms`] order): equal, bit
/// for bit, to [`rank`] over every posting of `terms`.
pub fn top_k<S: PostingSource>(
    src: &mut S,
    lengths: &DocLengths,
    terms: &[String],
    k: usize,
) -> Result<Vec<(i64, f32)>, S::Error> {
    let tuning = Tuning { read_all_max: read_all_max(), seed_postings: 5_000, probe_ratio: 4 };
    tuned(src, lengths, terms, k, tuning)
}

fn tuned<S: PostingSource>(
    src: &mut S,
    lengths: &DocLengths,
    terms: &[String],
    k: usize,
    tuning: Tuning,
) -> Result<Vec<(i64, f32)>, S::Error> {
    let refs: Vec<&str> = terms.iter().map(String::as_str).collect();
    if k == 0 || terms.is_empty() {
        return Ok(Vec::new());
    }
    let distinct = refs.iter().collect::<HashSet<_>>().len() == refs.len();
    let df = if distinct { src.df(&refs)? } else { Vec::new() };
    let n = lengths.len.len() as f32;
    let w: Vec<f32> = df.iter().map(|&d| idf(n, d as f32)).collect();
    let live: Vec<usize> = (0..df.len()).filter(|&i| df[i] > 0).collect();
    let total: u64 = df.iter().sum();
    let sane = lengths.avg.is_finite() && lengths.avg > 0.0 && live.iter().all(|&i| w[i].is_finite() && w[i] > 0.0);
    if !distinct || !sane || live.len() <= 1 || total <= tuning.read_all_max {
        return Ok(rank(lengths, &src.postings(&refs)?, k));
    }
    let m = terms.len();
    let slack = 1e-4_f64.max(8.0 * (m as f64 + 2.0) * f32::EPSILON as f64);
    let ub: Vec<f64> = w.iter().map(|&x| x as f64 * (K1 as f64 + 1.0)).collect();
    // Postings read whole, by term.
    let mut whole: Vec<Option<HashMap<i64, u32>>> = vec![None; m];
    let read = |src: &mut S, whole: &mut Vec<Option<HashMap<i64, u32>>>, ts: &[usize]| -> Result<(), S::Error> {
        if ts.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = ts.iter().map(|&i| refs[i]).collect();
        for (&i, p) in ts.iter().zip(src.postings(&names)?) {
            whole[i] = Some(p.into_iter().collect());
        }
        Ok(())
    };
    let exact = |whole: &[Option<HashMap<i64, u32>>], probed: &[HashMap<i64, u32>], row: i64| -> f32 {
        let mut s = 0.0f32;
        for i in 0..m {
            let tf = whole[i].as_ref().map_or_else(|| probed[i].get(&row), |p| p.get(&row));
            if let Some(&tf) = tf {
                s += contribution(lengths, w[i], row, tf);
            }
        }
        s
    };

    // 1. Seed.
    let mut by_df = live.clone();
    by_df.sort_by_key(|&i| (df[i], i));
    let mut seed = vec![by_df[0]];
    let mut cum = df[by_df[0]];
    for &i in &by_df[1..by_df.len() - 1] {
        if cum >= k as u64 && cum + df[i] > tuning.seed_postings {
            break;
        }
        seed.push(i);
        cum += df[i];
    }
    read(src, &mut whole, &seed)?;
    let partial = |whole: &[Option<HashMap<i64, u32>>]| -> HashMap<i64, f64> {
        let mut p: HashMap<i64, f64> = HashMap::new();
        for i in 0..m {
            if let Some(post) = &whole[i] {
                for (&row, &tf) in post {
                    *p.entry(row).or_default() += contribution(lengths, w[i], row, tf) as f64;
                }
            }
        }
        p
    };
    let seeds = partial(&whole);
    let mut top: Vec<(i64, f64)> = seeds.into_iter().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(2 * k + 16);
    let rows: Vec<i64> = top.iter().map(|r| r.0).collect();
    let rest: Vec<usize> = live.iter().copied().filter(|&i| whole[i].is_none()).collect();
    let probed = probe(src, &refs, &rest, &rows, m)?;
    let mut seeded: Vec<f32> = rows.iter().map(|&r| exact(&whole, &probed, r)).collect();
    seeded.sort_by(|a, b| b.total_cmp(a));
    let mut theta = seeded.get(k - 1).map_or(0.0, |&s| s as f64);

    // 2. Essential terms, read whole.
    let mut by_ub = live.clone();
    by_ub.sort_by(|&a, &b| ub[a].total_cmp(&ub[b]).then(a.cmp(&b)));
    let mut sum = 0.0;
    let mut lazy: Vec<usize> = Vec::new();
    for &i in &by_ub {
        if sum + ub[i] >= theta * (1.0 - slack) {
            break;
        }
        sum += ub[i];
        lazy.push(i);
    }
    let essential: Vec<usize> = by_ub.iter().copied().filter(|i| !lazy.contains(i) && whole[*i].is_none()).collect();
    read(src, &mut whole, &essential)?;
    lazy.retain(|&i| whole[i].is_none());

    // 3. Candidates, pruned, probed term by term (largest bound first), scored.
    let mut cands = partial(&whole);
    lazy.sort_by(|&a, &b| ub[b].total_cmp(&ub[a]).then(a.cmp(&b)));
    let mut probed: Vec<HashMap<i64, u32>> = vec![HashMap::new(); m];
    for step in 0..=lazy.len() {
        let mut parts: Vec<f64> = cands.values().copied().collect();
        if parts.len() >= k {
            let (_, kth, _) = parts.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
            theta = theta.max(*kth);
        }
        let rest_ub: f64 = lazy[step..].iter().map(|&i| ub[i]).sum();
        let cut = theta * (1.0 - slack);
        cands.retain(|_, p| *p + rest_ub >= cut);
        let Some(&t) = lazy.get(step) else { break };
        let mut rows: Vec<i64> = cands.keys().copied().collect();
        rows.sort_unstable();
        let found = if rows.len() as u64 * tuning.probe_ratio >= df[t] {
            read(src, &mut whole, &[t])?;
            None
        } else {
            Some(probe(src, &refs, &[t], &rows, m)?.swap_remove(t))
        };
        for (&row, &tf) in found.as_ref().or(whole[t].as_ref()).into_iter().flatten() {
            if let Some(p) = cands.get_mut(&row) {
                *p += contribution(lengths, w[t], row, tf) as f64;
            }
        }
        if let Some(found) = found {
            probed[t] = found;
        }
    }
    let scored: Vec<(i64, f32)> = cands.keys().map(|&r| (r, exact(&whole, &probed, r))).collect();
    Ok(best(scored, k))
}

/// The postings of the terms `ts` (indexes into `refs`) in `rows`, by term index.
fn probe<S: PostingSource>(
    src: &mut S,
    refs: &[&str],
    ts: &[usize],
    rows: &[i64],
    m: usize,
) -> Result<Vec<HashMap<i64, u32>>, S::Error> {
    let mut out = vec![HashMap::new(); m];
    if ts.is_empty() || rows.is_empty() {
        return Ok(out);
    }
    let names: Vec<&str> = ts.iter().map(|&i| refs[i]).collect();
    for (&i, p) in ts.iter().zip(src.probe(&names, rows)?) {
        out[i] = p.into_iter().collect();
    }
    Ok(out)
}

#[cfg(test)]
#[path = "maxscore_tests.rs"]
mod tests;
