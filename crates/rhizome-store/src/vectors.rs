//! Exact vector search over an in-memory matrix, and all-pairs kNN for synonymy edges.

use std::sync::atomic::{AtomicBool, Ordering};

use rhizome_core::{dot, Scored};

/// Row-major matrix of L2-normalised vectors with their node ids.
#[derive(Debug, Default)]
pub struct VectorMatrix {
    pub ids: Vec<String>,
    pub data: Vec<f32>,
    pub dim: usize,
}

/// Little-endian f32 bytes, the BLOB format of the `vectors` table.
pub fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Inverse of [`encode`].
pub fn decode(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Rows per matrix product in all-pairs kNN.
const BLOCK: usize = 256;

/// Keeps the best `k` (score, index) pairs seen: higher score first, then lower index, so
/// the result does not depend on the order of the pushes.
struct TopK {
    k: usize,
    items: Vec<(f32, usize)>,
    /// The worst item kept, once `k` are.
    floor: (f32, usize),
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK { k, items: Vec::with_capacity(k + 1), floor: (f32::NEG_INFINITY, usize::MAX) }
    }
    #[inline]
    fn push(&mut self, score: f32, i: usize) {
        let worse = score < self.floor.0 || (score == self.floor.0 && i > self.floor.1);
        if self.k == 0 || (self.items.len() == self.k && worse) {
            return;
        }
        self.items.push((score, i));
        if self.items.len() >= self.k {
            self.sort();
            self.items.truncate(self.k);
            self.floor = self.items[self.k - 1];
        }
    }
    fn sort(&mut self) {
        // Best first; ties by index so results are deterministic.
        self.items.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    }
    fn into_sorted(mut self) -> Vec<(f32, usize)> {
        self.sort();
        self.items
    }
}

impl VectorMatrix {
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    /// Add a row; a vector whose length differs from the first row's is left out (the
    /// first row sets the dimension).
    pub fn push(&mut self, id: String, v: &[f32]) {
        if self.dim == 0 {
            self.dim = v.len();
        }
        if v.len() == self.dim {
            self.ids.push(id);
            self.data.extend_from_slice(v);
        }
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// The `k` rows most similar to `query` (cosine), best first.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<Scored> {
        if self.dim == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let mut top = TopK::new(k);
        for i in 0..self.len() {
            top.push(dot(self.row(i), query), i);
        }
        top.into_sorted().into_iter().map(|(s, i)| Scored { id: self.ids[i].clone(), score: s }).collect()
    }

    /// Cosines of the `rows` vectors in `lhs` (row-major, `rows x dim`) against every row,
    /// into `out` (rows x len), as one matrix product.
    fn scores_against(&self, lhs: &[f32], rows: usize, out: &mut [f32]) {
        dots(lhs, rows, &self.data, self.len(), self.dim, out);
    }

    /// [`VectorMatrix::search`] for many queries at once (blocked matrix products): per
    /// query, its `k` nearest rows, best first. A query of the wrong dimension gets none.
    pub fn search_many(&self, queries: &[Vec<f32>], k: usize) -> Vec<Vec<Scored>> {
        let (n, d) = (self.len(), self.dim);
        let mut out = vec![Vec::new(); queries.len()];
        if n == 0 || d == 0 {
            return out;
        }
        let valid: Vec<usize> = (0..queries.len()).filter(|&i| queries[i].len() == d).collect();
        let mut scores = vec![0f32; BLOCK * n];
        let mut lhs = Vec::with_capacity(BLOCK * d);
        for block in valid.chunks(BLOCK) {
            lhs.clear();
            for &q in block {
                lhs.extend_from_slice(&queries[q]);
            }
            self.scores_against(&lhs, block.len(), &mut scores[..block.len() * n]);
            for (r, &q) in block.iter().enumerate() {
                let mut top = TopK::new(k);
                for (j, &sc) in scores[r * n..(r + 1) * n].iter().enumerate() {
                    top.push(sc, j);
                }
                out[q] =
                    top.into_sorted().into_iter().map(|(s, i)| Scored { id: self.ids[i].clone(), score: s }).collect();
            }
        }
        out
    }

    /// For every row, its `top_k` nearest other rows with cosine >= `threshold`, as
    /// undirected pairs (i < j) with their score, sorted. Returns `None` if cancelled.
    ///
    /// Each pair's cosine is computed once (row block `i` against the columns from the
    /// block's first row on: the upper triangle, half the products of the full square) and
    /// offered to both rows' top lists. Blocks are dealt to the threads in turn, so the
    /// triangle's long and short rows are shared evenly.
    pub fn knn_pairs(&self, top_k: usize, threshold: f32, cancel: &AtomicBool) -> Option<Vec<(usize, usize, f32)>> {
        let n = self.len();
        let threads = std::thread::available_parallelism().map(|x| x.get()).unwrap_or(1).max(1);
        let blocks: Vec<usize> = (0..n).step_by(BLOCK).collect();
        // Per thread: each row's best `top_k` among the pairs it scored (memory bounded by
        // rows x top_k, whatever the threshold).
        let found: Vec<Option<Vec<Option<TopK>>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let blocks = &blocks;
                    s.spawn(move || {
                        let mut tops: Vec<Option<TopK>> = (0..n).map(|_| None).collect();
                        let mut offer = |i: usize, j: usize, sc: f32| {
                            tops[i].get_or_insert_with(|| TopK::new(top_k)).push(sc, j);
                        };
                        let mut scores = vec![0f32; BLOCK * n];
                        for &b0 in blocks.iter().skip(t).step_by(threads) {
                            if cancel.load(Ordering::Relaxed) {
                                return None;
                            }
                            let rows = BLOCK.min(n - b0);
                            let cols = n - b0;
                            self.triangle_scores(b0, rows, &mut scores[..rows * cols]);
                            for r in 0..rows {
                                let i = b0 + r;
                                // Columns b0.. : j = b0 + c; only j > i (each pair once).
                                for (c, &sc) in scores[r * cols..(r + 1) * cols].iter().enumerate().skip(r + 1) {
                                    if sc >= threshold {
                                        offer(i, b0 + c, sc);
                                        offer(b0 + c, i, sc);
                                    }
                                }
                            }
                        }
                        Some(tops)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(None)).collect()
        });
        let mut merged: Vec<Option<TopK>> = (0..n).map(|_| None).collect();
        for tops in found {
            for (i, top) in tops?.into_iter().enumerate() {
                for (sc, j) in top.map(TopK::into_sorted).unwrap_or_default() {
                    merged[i].get_or_insert_with(|| TopK::new(top_k)).push(sc, j);
                }
            }
        }
        let mut pairs = Vec::new();
        for (i, top) in merged.into_iter().enumerate() {
            for (sc, j) in top.map(TopK::into_sorted).unwrap_or_default() {
                pairs.push((i.min(j), i.max(j), sc));
            }
        }
        pairs.sort_by_key(|a| (a.0, a.1));
        pairs.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        Some(pairs)
    }

    /// Cosines of rows `first..first + rows` against rows `first..`, into `out`
    /// (rows x (len - first)), as one matrix product.
    fn triangle_scores(&self, first: usize, rows: usize, out: &mut [f32]) {
        let (n, d) = (self.len(), self.dim);
        assert!(first + rows <= n && self.data.len() >= n * d);
        dots(&self.data[first * d..(first + rows) * d], rows, &self.data[first * d..], n - first, d, out);
    }
}

/// The dot products of the `rows` vectors in `lhs` (row-major, `rows x d`) with the `cols`
/// vectors in `rhs` (row-major, `cols x d`), into `out` (rows x cols, row-major), as one
/// matrix product.
fn dots(lhs: &[f32], rows: usize, rhs: &[f32], cols: usize, d: usize, out: &mut [f32]) {
    assert!(out.len() >= rows * cols && lhs.len() >= rows * d && rhs.len() >= cols * d);
    // SAFETY: dst is rows x cols row-major inside `out`; lhs is rows x d row-major; rhs is
    // read as the transpose of cols x d row-major (d x cols, column stride d). All extents
    // are checked by the assertion above.
    unsafe {
        gemm::gemm(
            rows,
            cols,
            d,
            out.as_mut_ptr(),
            1,
            cols as isize,
            false,
            lhs.as_ptr(),
            1,
            d as isize,
            rhs.as_ptr(),
            d as isize,
            1,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rows: &[[f32; 2]]) -> VectorMatrix {
        VectorMatrix {
            ids: (0..rows.len()).map(|i| format!("n{i}")).collect(),
            data: rows.iter().flatten().copied().collect(),
            dim: 2,
        }
    }

    #[test]
    fn search_and_knn() {
        let s = 0.5f32.sqrt();
        let mat = m(&[[1.0, 0.0], [s, s], [0.0, 1.0], [0.99, 0.141]]);
        let r = mat.search(&[1.0, 0.0], 2);
        assert_eq!(r.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), ["n0", "n3"]);
        let pairs = mat.knn_pairs(10, 0.9, &AtomicBool::new(false)).unwrap();
        assert_eq!(pairs.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(), [(0, 3)]);
        assert!(mat.knn_pairs(10, 0.9, &AtomicBool::new(true)).is_none());
        assert_eq!(decode(&encode(&[1.5, -2.0])), vec![1.5, -2.0]);
        // Batched search agrees with one-at-a-time search; a wrong-sized query gets nothing.
        let qs = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![1.0], vec![s, s]];
        let many = mat.search_many(&qs, 2);
        for (q, got) in qs.iter().zip(&many) {
            assert_eq!(got, &mat.search(q, 2));
        }
        assert!(many[2].is_empty());
    }

    /// All-pairs kNN against a plain double loop: 700 random vectors (blocks of 256: the
    /// triangle crosses block and thread boundaries), several k and thresholds.
    #[test]
    fn knn_pairs_match_brute_force() {
        let (n, d) = (700, 8);
        let mut seed = 5u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let mut data: Vec<f32> = (0..n * d).map(|_| next()).collect();
        for row in data.chunks_mut(d) {
            rhizome_core::l2_normalize(row);
        }
        let mat = VectorMatrix { ids: (0..n).map(|i| format!("n{i}")).collect(), data, dim: d };
        for (k, threshold) in [(3, 0.6f32), (10, 0.8), (1, 0.0)] {
            let mut want = Vec::new();
            for i in 0..n {
                let mut top = TopK::new(k);
                for j in 0..n {
                    let sc = dot(mat.row(i), mat.row(j));
                    if j != i && sc >= threshold {
                        top.push(sc, j);
                    }
                }
                want.extend(top.into_sorted().into_iter().map(|(_, j)| (i.min(j), i.max(j))));
            }
            want.sort();
            want.dedup();
            let got: Vec<(usize, usize)> =
                mat.knn_pairs(k, threshold, &AtomicBool::new(false)).unwrap().iter().map(|p| (p.0, p.1)).collect();
            assert_eq!(got, want, "k {k}, threshold {threshold}");
        }
    }
}
