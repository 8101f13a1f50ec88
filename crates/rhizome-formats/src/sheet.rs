//! Spreadsheets: XLSX (calamine's streaming cell reader), ODS ([`crate::ods`]) and CSV
//! tables. Each sheet is a page; its first non-empty row is the header, and every other
//! row becomes one line `Header1: value1; Header2: value2` (empty cells left out), so that
//! each row's text carries its column names.

use std::io::Cursor;

use calamine::{DataRef, Reader, Xlsx};

use crate::zipread::{check_not_ole, Zip};
use crate::{text, xml, Extracted, Limits, PageUnit, ReadError, Result};

pub use crate::ods::read_ods;

/// Reads an XLSX workbook: one page per worksheet, labelled with its name.
pub fn read_xlsx(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    check_not_ole(bytes)?;
    let mut zip = Zip::open(bytes, limits)?;
    let props = zip.read_text("docProps/core.xml")?.map(|core| xml::dublin_core(&core)).unwrap_or_default();
    // calamine has no budget of its own: prove every part fits ours first.
    zip.check_all()?;
    let damaged = |e: calamine::XlsxError| match e {
        calamine::XlsxError::Password => ReadError::Encrypted("password-protected Office file".into()),
        e => ReadError::damaged(e),
    };
    let mut book: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(damaged)?;
    let names = book.sheet_names();
    text::check_pages(names.len(), limits)?;
    let mut out = props.extracted(PageUnit::Sheet);
    for (i, name) in names.iter().enumerate() {
        let mut cells = book.worksheet_cells_reader(name).map_err(damaged)?;
        let mut table = Table::default();
        let mut row: Vec<(u32, String)> = Vec::new();
        let mut at = None;
        while let Some(cell) = cells.next_cell().map_err(damaged)? {
            let (r, c) = cell.get_position();
            if at != Some(r) {
                table.push_row(&row, out.text.len(), limits)?;
                row.clear();
                at = Some(r);
            }
            let v = value(cell.get_value());
            if !v.trim().is_empty() {
                row.push((c, v));
            }
        }
        table.push_row(&row, out.text.len(), limits)?;
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        out.push_page(number, Some(name.clone()), &text::tidy(&table.text));
    }
    text::check_len(&out.text, limits)?;
    Ok(out)
}

/// Reads a CSV table (RFC 4180; `;`, tab or `|` separated files too) as one sheet.
pub fn read_csv_table(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    let src = xml::decode(bytes);
    let delimiter = sniff(&src);
    let mut table = Table::default();
    let mut fields: Vec<(u32, String)> = Vec::new();
    let mut field = String::new();
    let mut chars = src.chars().peekable();
    let (mut quoted, mut was_quoted) = (false, false);
    let end_row = |fields: &mut Vec<(u32, String)>, table: &mut Table| {
        fields.retain(|(_, f)| !f.trim().is_empty());
        let r = table.push_row(fields, 0, limits);
        fields.clear();
        r
    };
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.trim().is_empty() && !was_quoted => {
                field.clear();
                quoted = true;
                was_quoted = true;
            }
            c if c == delimiter || c == '\n' || c == '\r' => {
                let col = u32::try_from(fields.len()).unwrap_or(u32::MAX);
                fields.push((col, std::mem::take(&mut field)));
                was_quoted = false;
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                if c != delimiter {
                    end_row(&mut fields, &mut table)?;
                }
            }
            c => field.push(c),
        }
    }
    if !field.is_empty() || !fields.is_empty() {
        let col = u32::try_from(fields.len()).unwrap_or(u32::MAX);
        fields.push((col, field));
        end_row(&mut fields, &mut table)?;
    }
    let mut out = Extracted { unit: PageUnit::Sheet, ..Default::default() };
    out.push_page(1, None, &text::tidy(&table.text));
    text::check_len(&out.text, limits)?;
    Ok(out)
}

/// The separator of a delimited file: whichever of `,` `;` tab `|` its first line has most.
fn sniff(src: &str) -> char {
    let first = src.lines().next().unwrap_or("");
    let mut best = (',', 0);
    for d in [',', ';', '\t', '|'] {
        let mut n = 0;
        let mut quoted = false;
        for c in first.chars() {
            if c == '"' {
                quoted = !quoted;
            } else if c == d && !quoted {
                n += 1;
            }
        }
        if n > best.1 {
            best = (d, n);
        }
    }
    best.0
}

/// A sheet's text being built: the header row, then one line per row.
#[derive(Default)]
pub(crate) struct Table {
    header: Option<Vec<(u32, String)>>,
    pub(crate) text: String,
}

impl Table {
    /// Adds a row of non-empty `(column, value)` cells; `before` is the text already
    /// taken by earlier sheets, for the size limit.
    pub(crate) fn push_row(&mut self, cells: &[(u32, String)], before: usize, limits: &Limits) -> Result<()> {
        if cells.is_empty() {
            return Ok(());
        }
        let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(header) = &self.header else {
            let header: Vec<(u32, String)> = cells.iter().map(|(c, v)| (*c, flat(v))).collect();
            let names: Vec<&str> = header.iter().map(|(_, v)| v.as_str()).collect();
            self.text.push_str(&names.join(" | "));
            self.text.push('\n');
            self.header = Some(header);
            return Ok(());
        };
        let mut first = true;
        for (col, v) in cells {
            if !first {
                self.text.push_str("; ");
            }
            first = false;
            match header.iter().find(|(c, _)| c == col) {
                Some((_, name)) if !name.is_empty() => self.text.push_str(name),
                _ => self.text.push_str(&column_name(*col)),
            }
            self.text.push_str(": ");
            self.text.push_str(&flat(v));
        }
        self.text.push('\n');
        text::check_growing(before + self.text.len(), limits)
    }
}

/// A column's letters: 0 -> `A`, 26 -> `AA`.
pub(crate) fn column_name(mut col: u32) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'A' + (col % 26) as u8);
        if col < 26 {
            break;
        }
        col = col / 26 - 1;
    }
    s.reverse();
    String::from_utf8_lossy(&s).into_owned()
}

/// A cell's value as text: numbers without float noise, dates as ISO 8601.
fn value(v: &DataRef<'_>) -> String {
    match v {
        DataRef::Int(i) => i.to_string(),
        DataRef::Float(f) => number(*f),
        DataRef::String(s) => s.clone(),
        DataRef::SharedString(s) => (*s).to_string(),
        DataRef::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        DataRef::DateTime(d) if d.is_datetime() => {
            let (y, mo, da, h, mi, s, _) = d.to_ymd_hms_milli();
            match (d.as_f64() < 1.0, (h, mi, s) == (0, 0, 0)) {
                (true, _) => format!("{h:02}:{mi:02}:{s:02}"),
                (false, true) => format!("{y:04}-{mo:02}-{da:02}"),
                (false, false) => format!("{y:04}-{mo:02}-{da:02} {h:02}:{mi:02}:{s:02}"),
            }
        }
        DataRef::DateTime(d) => number(d.as_f64()),
        DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => s.clone(),
        DataRef::Error(e) => e.to_string(),
        DataRef::Empty => String::new(),
    }
}

/// `f` as a spreadsheet shows it: `3` not `3.0`, `0.3` not `0.30000000000000004`.
pub(crate) fn number(f: f64) -> String {
    let plain = f.to_string();
    if plain.len() <= 15 || !f.is_finite() || f.abs() >= 1e15 {
        return plain;
    }
    let fixed = format!("{f:.12}");
    fixed.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_and_numbers() {
        assert_eq!(column_name(0), "A");
        assert_eq!(column_name(25), "Z");
        assert_eq!(column_name(26), "AA");
        assert_eq!(column_name(701), "ZZ");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(-2.5), "-2.5");
    }

    #[test]
    fn csv_quotes_and_header() {
        let csv = "Name,City,Note\r\n\"Lê, Văn\",Hà Nội,\"said \"\"hi\"\"\nthen left\"\n,Huế,\n";
        let e = read_csv_table(csv.as_bytes(), &Limits::default()).unwrap();
        assert_eq!(e.text, "Name | City | Note\nName: Lê, Văn; City: Hà Nội; Note: said \"hi\" then left\nCity: Huế");
        assert_eq!(sniff("a;b;c\n1;2;3"), ';');
    }
}
