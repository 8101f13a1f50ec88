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

/// Keeps the best `k` (score, index) pairs seen.
struct TopK {
    k: usize,
    items: Vec<(f32, usize)>,
    floor: f32,
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK { k, items: Vec::with_capacity(k + 1), floor: f32::NEG_INFINITY }
    }
    #[inline]
    fn push(&mut self, score: f32, i: usize) {
        if self.k == 0 || (self.items.len() == self.k && score <= self.floor) {
            return;
        }
        self.items.push((score, i));
        if self.items.len() > self.k {
            self.sort();
            self.items.truncate(self.k);
        }
        if self.items.len() == self.k {
            self.floor = self.items.iter().map(|x| x.0).fold(f32::INFINITY, f32::min);
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
        top.into_sorted()
            .into_iter()
            .map(|(s, i)| Scored { id: self.ids[i].clone(), score: s })
            .collect()
    }

    /// Cosines of rows `first..first + rows` against every row, into `out` (rows x len),
    /// as one matrix product.
    fn block_scores(&self, first: usize, rows: usize, out: &mut [f32]) {
        let d = self.dim;
        self.scores_against(&self.data[first * d..(first + rows) * d], rows, out);
    }

    /// Cosines of the `rows` vectors in `lhs` (row-major, `rows x dim`) against every row,
    /// into `out` (rows x len), as one matrix product.
    fn scores_against(&self, lhs: &[f32], rows: usize, out: &mut [f32]) {
        let (n, d) = (self.len(), self.dim);
        assert!(out.len() >= rows * n && self.data.len() >= n * d && lhs.len() >= rows * d);
        // SAFETY: dst is rows x n row-major inside `out`; lhs is rows x d row-major; rhs is
        // the transpose of the whole matrix (d x n, column stride d). All extents are
        // checked by the assertion above.
        unsafe {
            gemm::gemm(
                rows, n, d,
                out.as_mut_ptr(), 1, n as isize, false,
                lhs.as_ptr(), 1, d as isize,
                self.data.as_ptr(), d as isize, 1,
                0.0, 1.0, false, false, false, gemm::Parallelism::None,
            );
        }
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
                out[q] = top
                    .into_sorted()
                    .into_iter()
                    .map(|(s, i)| Scored { id: self.ids[i].clone(), score: s })
                    .collect();
            }
        }
        out
    }

    /// For every row, its `top_k` nearest other rows with cosine >= `threshold`, as
    /// undirected pairs (i < j) with their score, sorted. Returns `None` if cancelled.
    pub fn knn_pairs(&self, top_k: usize, threshold: f32, cancel: &AtomicBool)
        -> Option<Vec<(usize, usize, f32)>> {
        let n = self.len();
        let threads = std::thread::available_parallelism().map(|x| x.get()).unwrap_or(1);
        let per = n.div_ceil(threads.max(1)).max(1);
        let results: Vec<Option<Vec<(usize, usize, f32)>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .step_by(per)
                .map(|start| {
                    s.spawn(move || {
                        let mut out = Vec::new();
                        let end = (start + per).min(n);
                        let mut scores = vec![0f32; BLOCK * n];
                        for b0 in (start..end).step_by(BLOCK) {
                            if cancel.load(Ordering::Relaxed) {
                                return None;
                            }
                            let rows = BLOCK.min(end - b0);
                            self.block_scores(b0, rows, &mut scores[..rows * n]);
                            for r in 0..rows {
                                let i = b0 + r;
                                let mut top = TopK::new(top_k);
                                for (j, &sc) in scores[r * n..(r + 1) * n].iter().enumerate() {
                                    if j != i && sc >= threshold {
                                        top.push(sc, j);
                                    }
                                }
                                for (sc, j) in top.into_sorted() {
                                    out.push((i.min(j), i.max(j), sc));
                                }
                            }
                        }
                        Some(out)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(None)).collect()
        });
        let mut pairs = Vec::new();
        for r in results {
            pairs.extend(r?);
        }
        pairs.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        pairs.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        Some(pairs)
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
}
