//! Personalized PageRank by forward push (Andersen, Chung and Lang, 2006), run only as
//! far as the ranking a caller reads needs: the best `top_k` passages under hippo's fused
//! score, certified by a bound on what the unpushed mass can still change.
//!
//! Forward push keeps an estimate `p` and a residual `r` (initially the restart
//! distribution `s`). Pushing node `u` moves `(1 - d) r[u]` into `p[u]` and spreads
//! `d r[u]` over `u`'s neighbours in proportion to edge weight; throughout,
//! `x = p + PPR(r)`, where `x` is the PageRank of `s` and `PPR(r)` that of the residual.
//! Only nodes holding residual are pushed, so the work stays near the seeds instead of
//! sweeping the whole graph every iteration.
//!
//! Bound. Pushing every node whose residual exceeds `eps x strength(u)` leaves
//! `r[u] <= eps x strength(u)` everywhere. On an undirected graph the PageRank matrix
//! `G` satisfies `G[v][u] strength(u) = G[u][v] strength(v)`, and a column of `G` sums
//! to at most 1, so what the residual still adds to node `v` is
//! `PPR(r)[v] <= strength(v) x max_u r[u] / strength(u) <= eps x strength(v)`, and never
//! more than the residual's total mass. Every estimate is a lower bound (pushes only add).
//!
//! Dangling nodes (no edges) absorb the mass pushed at them here, where the reference
//! solvers send it back along `s`. That scales every score by one common factor (the
//! walk restarts along `s` either way), so scores divided by the best one, which is all
//! hippo reads, are the same.
//!
//! Certification: with each passage's PageRank known to lie in `[p, p + bound]`, the
//! fused score `(1 - w) rel + w PPR / max PPR` lies in an interval; the ranking is
//! final when each of the `top_k` best passages is above the next one and the last of
//! them above every other passage for every value in those intervals. Until then `eps`
//! is divided by [`REFINE`] and pushing resumes from where it stopped, down to
//! [`MIN_EPS`] (a ranking whose gaps are below f32 precision is then taken as it stands).

use std::cell::RefCell;
use std::collections::VecDeque;

use super::{restart, Csr};

/// Residual threshold (per unit of node strength) of the first round of pushes.
pub const START_EPS: f32 = 1e-4;
/// Each round that does not certify the ranking divides the threshold by this.
pub const REFINE: f32 = 2.0;
/// Threshold at which pushing stops even if the ranking is not certified: the scores
/// are then within `MIN_EPS x strength` of exact, below what f32 separates.
pub const MIN_EPS: f32 = 1e-9;
/// Pushes allowed per node of the graph before the caller is told to solve by sweeps
/// instead ([`PushPpr::exhausted`]): past ~4 pushes a node, over-relaxed sweeps of the
/// whole graph cost less (MuSiQue OpenIE graph, 100 questions: top 5, median 2,950 pushes, 1
/// question over the budget; top 15, median 55,500, 31 over it).
pub const PUSH_BUDGET_PER_NODE: usize = 4;

/// What the caller ranks: passages are nodes `first..first + relative.len()`, scored
/// `(1 - share) x relative + share x PPR / best passage PPR`; the best `top_k` count.
#[derive(Debug, Clone, Copy)]
pub struct FusedRanking<'a> {
    pub first: usize,
    pub relative: &'a [f32],
    pub share: f64,
    pub top_k: usize,
}

/// Result of [`ranked_ppr`].
#[derive(Debug, Clone, PartialEq)]
pub struct PushPpr {
    /// PageRank mass of each passage (lower bounds, up to a common factor; see the
    /// module documentation), in the order of [`FusedRanking::relative`].
    pub passages: Vec<f64>,
    /// Nodes pushed.
    pub pushes: usize,
    /// Rounds of pushing (each at a threshold [`REFINE`] times lower).
    pub rounds: usize,
    /// Threshold of the last round.
    pub eps: f32,
    /// True when the bound proves the `top_k` order exact.
    pub certified: bool,
    /// True when the ranking was not certified within [`PUSH_BUDGET_PER_NODE`] pushes
    /// per node: the scores are then those of the last round, and the caller should
    /// solve by sweeps ([`super::personalized_pagerank`]).
    pub exhausted: bool,
}

/// Per-thread work arrays, kept between queries (no allocation per query once sized).
#[derive(Default)]
struct Buffers {
    p: Vec<f32>,
    r: Vec<f32>,
    queued: Vec<bool>,
    queue: VecDeque<u32>,
}

thread_local! {
    static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::default());
}

/// Forward-push PageRank of `g` from `reset` (normalised like the reference solvers'),
/// pushed until `ranking`'s best `top_k` passages are certified (see the module
/// documentation). `damping` as in [`super::personalized_pagerank`].
pub fn ranked_ppr(g: &Csr, reset: &[f64], damping: f64, ranking: &FusedRanking) -> PushPpr {
    ranked_ppr_between(g, reset, damping, ranking, START_EPS, MIN_EPS)
}

/// [`ranked_ppr`] with its first and last thresholds given (`min_eps = start_eps`: one
/// round of pushes, certified or not).
pub fn ranked_ppr_between(
    g: &Csr,
    reset: &[f64],
    damping: f64,
    ranking: &FusedRanking,
    start_eps: f32,
    min_eps: f32,
) -> PushPpr {
    let n = g.nodes();
    let c = ranking.relative.len().min(n.saturating_sub(ranking.first));
    let mut out =
        PushPpr { passages: vec![0.0; c], pushes: 0, rounds: 0, eps: start_eps, certified: false, exhausted: false };
    let Some((s, d)) = restart(n, reset, damping) else {
        out.certified = true;
        return out;
    };
    BUFFERS.with(|b| {
        let mut b = b.borrow_mut();
        let Buffers { p, r, queued, queue } = &mut *b;
        p.clear();
        p.resize(n, 0.0);
        r.clear();
        r.extend(s.iter().map(|&x| x as f32));
        queued.clear();
        queued.resize(n, false);
        queue.clear();
        let d = d as f32;
        let mut eps = start_eps;
        loop {
            out.rounds += 1;
            for (u, (&ru, &su)) in r.iter().zip(&g.strength).enumerate() {
                if ru > eps * su {
                    queued[u] = true;
                    queue.push_back(u as u32);
                }
            }
            out.pushes += push(g, d, eps, p, r, queued, queue);
            let residual: f32 = r.iter().sum();
            out.certified = certify(g, p, residual, eps, ranking);
            if out.certified || eps <= min_eps {
                break;
            }
            if out.pushes > PUSH_BUDGET_PER_NODE * n {
                out.exhausted = true;
                break;
            }
            eps /= REFINE;
        }
        out.eps = eps;
        for (o, &x) in out.passages.iter_mut().zip(p.get(ranking.first..ranking.first + c).unwrap_or(&[])) {
            *o = x as f64;
        }
    });
    out
}

/// Pushes queued nodes (FIFO) until no node's residual exceeds `eps x strength`;
/// returns the number of pushes.
fn push(
    g: &Csr,
    d: f32,
    eps: f32,
    p: &mut [f32],
    r: &mut [f32],
    queued: &mut [bool],
    queue: &mut VecDeque<u32>,
) -> usize {
    let mut pushes = 0;
    let keep = 1.0 - d;
    while let Some(u) = queue.pop_front() {
        let u = u as usize;
        queued[u] = false;
        let ru = r[u];
        r[u] = 0.0;
        p[u] += keep * ru;
        pushes += 1;
        let m = d * ru;
        let (lo, hi) = (g.offsets[u] as usize, g.offsets[u + 1] as usize);
        for (&v, &w) in g.targets[lo..hi].iter().zip(&g.out_step[lo..hi]) {
            let v = v as usize;
            let rv = r[v] + m * w;
            r[v] = rv;
            if !queued[v] && rv > eps * g.strength[v] {
                queued[v] = true;
                queue.push_back(v as u32);
            }
        }
    }
    pushes
}

/// True when the bound proves the order of the best `top_k` passages (see the module
/// documentation): every passage's PageRank lies in `[p, p + min(eps x strength,
/// residual)]`.
fn certify(g: &Csr, p: &[f32], residual: f32, eps: f32, ranking: &FusedRanking) -> bool {
    let c = ranking.relative.len().min(p.len().saturating_sub(ranking.first));
    let k = ranking.top_k.min(c);
    let (a, w) = (1.0 - ranking.share.clamp(0.0, 1.0), ranking.share.clamp(0.0, 1.0));
    let lo = |i: usize| p[ranking.first + i] as f64;
    let hi = |i: usize| lo(i) + (eps * g.strength[ranking.first + i]).min(residual) as f64;
    let rel = |i: usize| ranking.relative[i] as f64;
    let (mut m_lo, mut m_hi) = (0.0f64, 0.0f64);
    for i in 0..c {
        m_lo = m_lo.max(lo(i));
        m_hi = m_hi.max(hi(i));
    }
    if k == 0 || w == 0.0 {
        return true;
    }
    if m_lo <= 0.0 {
        return false;
    }
    // The fused score is linear in t = 1 / best PPR, which lies in [1 / m_hi, 1 / m_lo]:
    // a comparison that holds at both ends holds in between.
    let ts = [1.0 / m_hi, 1.0 / m_lo];
    let estimate = |i: usize| a * rel(i) + w * lo(i) / m_lo;
    // The best k by estimate, best first (ties by passage number, as hippo ranks).
    let mut top: Vec<(f64, usize)> = Vec::with_capacity(k + 1);
    for i in 0..c {
        let e = estimate(i);
        if top.len() == k && e <= top[k - 1].0 {
            continue;
        }
        let at = top.partition_point(|&(x, _)| x >= e);
        top.insert(at, (e, i));
        top.truncate(k);
    }
    let above = |i: usize, j: usize| ts.iter().all(|&t| a * (rel(i) - rel(j)) + w * t * (lo(i) - hi(j)) > 0.0);
    if top.windows(2).any(|pair| !above(pair[0].1, pair[1].1)) {
        return false;
    }
    let last = top[k - 1].1;
    let mut in_top = vec![false; c];
    top.iter().for_each(|&(_, i)| in_top[i] = true);
    ts.iter().all(|&t| {
        let floor = a * rel(last) + w * t * lo(last);
        (0..c).filter(|&j| !in_top[j]).all(|j| a * rel(j) + w * t * hi(j) < floor)
    })
}
