//! Diacritic folding for search terms: `giải thưởng` -> `giai thuong`, `Đà Nẵng` ->
//! `da nang`, `Ørsted` -> `orsted`, so that text typed without diacritics still matches.

/// Lowercase Latin letters with diacritics and the ASCII letter they fold to, sorted by
/// char (Latin-1, Latin Extended-A/B and Latin Extended Additional, which holds the
/// Vietnamese tone-marked vowels). Generated from Unicode decompositions, plus the
/// letters without one (đ, ø, ł, ð, ħ, ı, ŧ...).
static FOLD: &[(char, u8)] = &[
    ('\u{00E0}', b'a'), ('\u{00E1}', b'a'), ('\u{00E2}', b'a'), ('\u{00E3}', b'a'), ('\u{00E4}', b'a'), ('\u{00E5}', b'a'),
    ('\u{00E7}', b'c'), ('\u{00E8}', b'e'), ('\u{00E9}', b'e'), ('\u{00EA}', b'e'), ('\u{00EB}', b'e'), ('\u{00EC}', b'i'),
    ('\u{00ED}', b'i'), ('\u{00EE}', b'i'), ('\u{00EF}', b'i'), ('\u{00F0}', b'd'), ('\u{00F1}', b'n'), ('\u{00F2}', b'o'),
    ('\u{00F3}', b'o'), ('\u{00F4}', b'o'), ('\u{00F5}', b'o'), ('\u{00F6}', b'o'), ('\u{00F8}', b'o'), ('\u{00F9}', b'u'),
    ('\u{00FA}', b'u'), ('\u{00FB}', b'u'), ('\u{00FC}', b'u'), ('\u{00FD}', b'y'), ('\u{00FF}', b'y'), ('\u{0101}', b'a'),
    ('\u{0103}', b'a'), ('\u{0105}', b'a'), ('\u{0107}', b'c'), ('\u{0109}', b'c'), ('\u{010B}', b'c'), ('\u{010D}', b'c'),
    ('\u{010F}', b'd'), ('\u{0111}', b'd'), ('\u{0113}', b'e'), ('\u{0115}', b'e'), ('\u{0117}', b'e'), ('\u{0119}', b'e'),
    ('\u{011B}', b'e'), ('\u{011D}', b'g'), ('\u{011F}', b'g'), ('\u{0121}', b'g'), ('\u{0123}', b'g'), ('\u{0125}', b'h'),
    ('\u{0127}', b'h'), ('\u{0129}', b'i'), ('\u{012B}', b'i'), ('\u{012D}', b'i'), ('\u{012F}', b'i'), ('\u{0131}', b'i'),
    ('\u{0135}', b'j'), ('\u{0137}', b'k'), ('\u{013A}', b'l'), ('\u{013C}', b'l'), ('\u{013E}', b'l'), ('\u{0142}', b'l'),
    ('\u{0144}', b'n'), ('\u{0146}', b'n'), ('\u{0148}', b'n'), ('\u{014D}', b'o'), ('\u{014F}', b'o'), ('\u{0151}', b'o'),
    ('\u{0155}', b'r'), ('\u{0157}', b'r'), ('\u{0159}', b'r'), ('\u{015B}', b's'), ('\u{015D}', b's'), ('\u{015F}', b's'),
    ('\u{0161}', b's'), ('\u{0163}', b't'), ('\u{0165}', b't'), ('\u{0167}', b't'), ('\u{0169}', b'u'), ('\u{016B}', b'u'),
    ('\u{016D}', b'u'), ('\u{016F}', b'u'), ('\u{0171}', b'u'), ('\u{0173}', b'u'), ('\u{0175}', b'w'), ('\u{0177}', b'y'),
    ('\u{017A}', b'z'), ('\u{017C}', b'z'), ('\u{017E}', b'z'), ('\u{0180}', b'b'), ('\u{01A1}', b'o'), ('\u{01B0}', b'u'),
    ('\u{01CE}', b'a'), ('\u{01D0}', b'i'), ('\u{01D2}', b'o'), ('\u{01D4}', b'u'), ('\u{01D6}', b'u'), ('\u{01D8}', b'u'),
    ('\u{01DA}', b'u'), ('\u{01DC}', b'u'), ('\u{01DF}', b'a'), ('\u{01E1}', b'a'), ('\u{01E5}', b'g'), ('\u{01E7}', b'g'),
    ('\u{01E9}', b'k'), ('\u{01EB}', b'o'), ('\u{01ED}', b'o'), ('\u{01F0}', b'j'), ('\u{01F5}', b'g'), ('\u{01F9}', b'n'),
    ('\u{01FB}', b'a'), ('\u{0201}', b'a'), ('\u{0203}', b'a'), ('\u{0205}', b'e'), ('\u{0207}', b'e'), ('\u{0209}', b'i'),
    ('\u{020B}', b'i'), ('\u{020D}', b'o'), ('\u{020F}', b'o'), ('\u{0211}', b'r'), ('\u{0213}', b'r'), ('\u{0215}', b'u'),
    ('\u{0217}', b'u'), ('\u{0219}', b's'), ('\u{021B}', b't'), ('\u{021F}', b'h'), ('\u{0227}', b'a'), ('\u{0229}', b'e'),
    ('\u{022B}', b'o'), ('\u{022D}', b'o'), ('\u{022F}', b'o'), ('\u{0231}', b'o'), ('\u{0233}', b'y'), ('\u{023C}', b'c'),
    ('\u{0247}', b'e'), ('\u{024D}', b'r'), ('\u{024F}', b'y'), ('\u{0268}', b'i'), ('\u{0289}', b'u'), ('\u{1E01}', b'a'),
    ('\u{1E03}', b'b'), ('\u{1E05}', b'b'), ('\u{1E07}', b'b'), ('\u{1E09}', b'c'), ('\u{1E0B}', b'd'), ('\u{1E0D}', b'd'),
    ('\u{1E0F}', b'd'), ('\u{1E11}', b'd'), ('\u{1E13}', b'd'), ('\u{1E15}', b'e'), ('\u{1E17}', b'e'), ('\u{1E19}', b'e'),
    ('\u{1E1B}', b'e'), ('\u{1E1D}', b'e'), ('\u{1E1F}', b'f'), ('\u{1E21}', b'g'), ('\u{1E23}', b'h'), ('\u{1E25}', b'h'),
    ('\u{1E27}', b'h'), ('\u{1E29}', b'h'), ('\u{1E2B}', b'h'), ('\u{1E2D}', b'i'), ('\u{1E2F}', b'i'), ('\u{1E31}', b'k'),
    ('\u{1E33}', b'k'), ('\u{1E35}', b'k'), ('\u{1E37}', b'l'), ('\u{1E39}', b'l'), ('\u{1E3B}', b'l'), ('\u{1E3D}', b'l'),
    ('\u{1E3F}', b'm'), ('\u{1E41}', b'm'), ('\u{1E43}', b'm'), ('\u{1E45}', b'n'), ('\u{1E47}', b'n'), ('\u{1E49}', b'n'),
    ('\u{1E4B}', b'n'), ('\u{1E4D}', b'o'), ('\u{1E4F}', b'o'), ('\u{1E51}', b'o'), ('\u{1E53}', b'o'), ('\u{1E55}', b'p'),
    ('\u{1E57}', b'p'), ('\u{1E59}', b'r'), ('\u{1E5B}', b'r'), ('\u{1E5D}', b'r'), ('\u{1E5F}', b'r'), ('\u{1E61}', b's'),
    ('\u{1E63}', b's'), ('\u{1E65}', b's'), ('\u{1E67}', b's'), ('\u{1E69}', b's'), ('\u{1E6B}', b't'), ('\u{1E6D}', b't'),
    ('\u{1E6F}', b't'), ('\u{1E71}', b't'), ('\u{1E73}', b'u'), ('\u{1E75}', b'u'), ('\u{1E77}', b'u'), ('\u{1E79}', b'u'),
    ('\u{1E7B}', b'u'), ('\u{1E7D}', b'v'), ('\u{1E7F}', b'v'), ('\u{1E81}', b'w'), ('\u{1E83}', b'w'), ('\u{1E85}', b'w'),
    ('\u{1E87}', b'w'), ('\u{1E89}', b'w'), ('\u{1E8B}', b'x'), ('\u{1E8D}', b'x'), ('\u{1E8F}', b'y'), ('\u{1E91}', b'z'),
    ('\u{1E93}', b'z'), ('\u{1E95}', b'z'), ('\u{1E96}', b'h'), ('\u{1E97}', b't'), ('\u{1E98}', b'w'), ('\u{1E99}', b'y'),
    ('\u{1EA1}', b'a'), ('\u{1EA3}', b'a'), ('\u{1EA5}', b'a'), ('\u{1EA7}', b'a'), ('\u{1EA9}', b'a'), ('\u{1EAB}', b'a'),
    ('\u{1EAD}', b'a'), ('\u{1EAF}', b'a'), ('\u{1EB1}', b'a'), ('\u{1EB3}', b'a'), ('\u{1EB5}', b'a'), ('\u{1EB7}', b'a'),
    ('\u{1EB9}', b'e'), ('\u{1EBB}', b'e'), ('\u{1EBD}', b'e'), ('\u{1EBF}', b'e'), ('\u{1EC1}', b'e'), ('\u{1EC3}', b'e'),
    ('\u{1EC5}', b'e'), ('\u{1EC7}', b'e'), ('\u{1EC9}', b'i'), ('\u{1ECB}', b'i'), ('\u{1ECD}', b'o'), ('\u{1ECF}', b'o'),
    ('\u{1ED1}', b'o'), ('\u{1ED3}', b'o'), ('\u{1ED5}', b'o'), ('\u{1ED7}', b'o'), ('\u{1ED9}', b'o'), ('\u{1EDB}', b'o'),
    ('\u{1EDD}', b'o'), ('\u{1EDF}', b'o'), ('\u{1EE1}', b'o'), ('\u{1EE3}', b'o'), ('\u{1EE5}', b'u'), ('\u{1EE7}', b'u'),
    ('\u{1EE9}', b'u'), ('\u{1EEB}', b'u'), ('\u{1EED}', b'u'), ('\u{1EEF}', b'u'), ('\u{1EF1}', b'u'), ('\u{1EF3}', b'y'),
    ('\u{1EF5}', b'y'), ('\u{1EF7}', b'y'), ('\u{1EF9}', b'y'),
];

/// True for a combining diacritical mark (U+0300..U+036F), as decomposed text carries.
pub fn is_combining_mark(c: char) -> bool {
    ('\u{0300}'..='\u{036F}').contains(&c)
}

/// `s` lowercased with diacritics removed: combining marks dropped, precomposed letters
/// folded to their ASCII base (`đ` -> `d`), ligatures spelt out (`æ` -> `ae`, `ß` ->
/// `ss`). Other characters (digits, CJK, other scripts) are kept as they are.
pub fn fold_diacritics(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii() {
            out.push(c);
        } else if is_combining_mark(c) {
            continue;
        } else if let Ok(i) = FOLD.binary_search_by_key(&c, |p| p.0) {
            out.push(FOLD[i].1 as char);
        } else {
            match c {
                'æ' => out.push_str("ae"),
                'œ' => out.push_str("oe"),
                'ß' => out.push_str("ss"),
                'þ' => out.push_str("th"),
                _ => out.push(c),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_vietnamese_and_other_latin() {
        assert_eq!(fold_diacritics("Giải thưởng"), "giai thuong");
        assert_eq!(fold_diacritics("Đà Nẵng, Huế"), "da nang, hue");
        assert_eq!(fold_diacritics("NGUYỄN Phú Trọng"), "nguyen phu trong");
        assert_eq!(fold_diacritics("Ørsted Straße Æsir"), "orsted strasse aesir");
        // Decomposed input (e + combining acute) folds the same way.
        assert_eq!(fold_diacritics("Beyonce\u{301}"), "beyonce");
        assert_eq!(fold_diacritics("微软 100"), "微软 100");
        assert!(FOLD.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
