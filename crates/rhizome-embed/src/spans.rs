//! Span pooling: a vector for a part of a text (a sentence of a chunk) from the text's own
//! forward pass, the mean of the last-layer states of the tokens that overlap the part.
//! Mean pooling is how the text's vector is made, so a span's vector is the same kind of
//! vector, read in the context of the whole text, at no extra model cost.

use std::ops::Range;

use rhizome_core::l2_normalize;

/// The range of token indices whose byte ranges (`offsets`, in token order) overlap
/// `[a, b)`; None when none does.
pub(crate) fn overlapping(offsets: &[Range<usize>], a: usize, b: usize) -> Option<Range<usize>> {
    let first = offsets.iter().position(|o| o.end > a && o.start < b)?;
    let len = offsets[first..].iter().take_while(|o| o.end > a && o.start < b).count();
    Some(first..first + len)
}

/// Mean of rows `r` of `rows` (`h` columns), L2-normalised.
pub(crate) fn pool(rows: &[f32], h: usize, r: &Range<usize>) -> Vec<f32> {
    let mut acc = vec![0f32; h];
    for row in rows[r.start * h..r.end * h].chunks_exact(h) {
        acc.iter_mut().zip(row).for_each(|(a, v)| *a += v);
    }
    let inv = 1.0 / r.len().max(1) as f32;
    acc.iter_mut().for_each(|a| *a *= inv);
    l2_normalize(&mut acc);
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_tokens_of_a_span() {
        // "▁A." "▁B" "c." as byte ranges of " A. Bc."
        let offs = vec![0..3, 3..5, 5..7];
        assert_eq!(overlapping(&offs, 1, 3), Some(0..1));
        assert_eq!(overlapping(&offs, 4, 7), Some(1..3));
        assert_eq!(overlapping(&offs, 7, 9), None);
    }

    #[test]
    fn pool_is_the_normalised_mean() {
        let rows = [1.0, 0.0, 3.0, 0.0, 5.0, 9.0];
        assert_eq!(pool(&rows, 2, &(0..2)), vec![1.0, 0.0]);
        let v = pool(&rows, 2, &(2..3));
        assert!((v[0] - 5.0 / 106f32.sqrt()).abs() < 1e-6);
    }
}
