//! OpenDocument spreadsheets (ODS), streamed from `content.xml`.
//!
//! Read here rather than by calamine: calamine expands `number-columns-repeated` and
//! `number-rows-repeated` into a dense grid (up to 100 million cells) with no limit the
//! caller can set, while this reader skips repeated empty cells and charges repeated
//! filled ones to [`Limits::max_text`] as it goes.

use quick_xml::events::{BytesStart, Event};

use crate::sheet::{number, Table};
use crate::xml::{self, attr, attr_exact, name};
use crate::zipread::Zip;
use crate::{text, Extracted, Limits, PageUnit, ReadError, Result};

/// Columns and rows a sheet may have (as in LibreOffice and Excel).
const MAX_COLUMNS: u32 = 16_384;
const MAX_ROWS: u32 = 1_048_576;

/// Reads an ODS spreadsheet: one page per table, labelled with its name.
pub fn read_ods(bytes: &[u8], limits: &Limits) -> Result<Extracted> {
    let mut zip = Zip::open(bytes, limits)?;
    if let Some(manifest) = zip.read_text("META-INF/manifest.xml")? {
        if manifest.contains("encryption-data") {
            return Err(ReadError::Encrypted("password-protected OpenDocument file".into()));
        }
    }
    let Some(content) = zip.read_text("content.xml")? else {
        return Err(ReadError::damaged("no content.xml: not an OpenDocument file"));
    };
    let props = zip.read_text("meta.xml")?.map(|meta| xml::dublin_core(&meta)).unwrap_or_default();
    let mut out = props.extracted(PageUnit::Sheet);
    let mut r = xml::reader(&content);
    let mut sheet: Option<(String, Table)> = None;
    let mut depth = 0usize; // tables open (a table inside a cell is read as the cell's text)
    let mut row = Row::default();
    let mut row_repeat = 1u32;
    let mut cell: Option<(String, u32, Option<String>)> = None; // text, repeat, value attribute
    let mut in_p = 0usize;
    let mut rows = 0u32;
    loop {
        let ev = xml::next(&mut r, "content.xml")?;
        match ev {
            Event::Start(e) => match name(&e) {
                b"table" => {
                    depth += 1;
                    if depth == 1 {
                        let label = attr_exact(&e, b"table:name").unwrap_or_default();
                        sheet = Some((label, Table::default()));
                        rows = 0;
                        text::check_pages(out.pages.len() + 1, limits)?;
                    }
                }
                b"annotation" | b"shapes" => xml::skip_element(&mut r, "content.xml")?,
                b"table-row" if depth == 1 => {
                    row = Row::default();
                    row_repeat = repeat(&e, b"table:number-rows-repeated");
                }
                b"table-cell" | b"covered-table-cell" if depth == 1 => {
                    cell = Some((String::new(), repeat(&e, b"table:number-columns-repeated"), value_attr(&e)));
                }
                b"p" | b"h" => {
                    if let Some((t, _, _)) = cell.as_mut().filter(|_| in_p == 0) {
                        if !t.is_empty() {
                            t.push('\n');
                        }
                    }
                    in_p += 1;
                }
                _ => {}
            },
            Event::Empty(e) => match name(&e) {
                b"table-cell" | b"covered-table-cell" if depth == 1 => {
                    let n = repeat(&e, b"table:number-columns-repeated");
                    match value_attr(&e) {
                        Some(v) => row.push(v, n, limits)?,
                        None => row.skip(n),
                    }
                }
                b"s" if in_p > 0 => {
                    let n = attr(&e, b"c").and_then(|c| c.parse::<usize>().ok()).unwrap_or(1);
                    if let Some((t, _, _)) = cell.as_mut() {
                        t.push_str(&" ".repeat(n.min(64)));
                    }
                }
                b"tab" | b"line-break" if in_p > 0 => {
                    if let Some((t, _, _)) = cell.as_mut() {
                        t.push(' ');
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_p > 0 => {
                if let Some((c, _, _)) = cell.as_mut() {
                    c.push_str(&xml::text(&t));
                }
            }
            Event::GeneralRef(g) if in_p > 0 => {
                if let Some((c, _, _)) = cell.as_mut() {
                    c.push_str(&xml::reference(&g));
                }
            }
            Event::End(e) => match xml::local(e.name().into_inner()) {
                b"p" | b"h" => in_p = in_p.saturating_sub(1),
                b"table-cell" | b"covered-table-cell" if depth == 1 => {
                    if let Some((t, n, v)) = cell.take() {
                        let t = if t.trim().is_empty() { v.unwrap_or_default() } else { t };
                        if t.trim().is_empty() {
                            row.skip(n);
                        } else {
                            row.push(t, n, limits)?;
                        }
                    }
                }
                b"table-row" if depth == 1 => {
                    if let Some((_, table)) = sheet.as_mut() {
                        // A filled row repeated is the same row again; empty ones cost nothing.
                        let left = MAX_ROWS.saturating_sub(rows);
                        let n = if row.cells.is_empty() { 0 } else { row_repeat.min(left) };
                        for _ in 0..n {
                            table.push_row(&row.cells, out.text.len(), limits)?;
                        }
                        rows = rows.saturating_add(row_repeat);
                    }
                }
                b"table" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if let Some((label, table)) = sheet.take() {
                            let number = u32::try_from(out.pages.len() + 1).unwrap_or(u32::MAX);
                            out.push_page(number, Some(label), &text::tidy(&table.text));
                        }
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    text::check_len(&out.text, limits)?;
    Ok(out)
}

/// A repeat count attribute (1 when absent or unreadable).
fn repeat(e: &BytesStart<'_>, key: &[u8]) -> u32 {
    attr_exact(e, key).and_then(|v| v.parse().ok()).unwrap_or(1).max(1)
}

/// The typed value of a cell with no text of its own.
fn value_attr(e: &BytesStart<'_>) -> Option<String> {
    ["office:value", "office:date-value", "office:time-value", "office:boolean-value", "office:string-value"]
        .iter()
        .find_map(|k| attr_exact(e, k.as_bytes()))
        .map(|v| v.parse::<f64>().map(number).unwrap_or(v))
}

/// A row being read: its filled cells, the next column, and the bytes of its text.
#[derive(Default)]
struct Row {
    cells: Vec<(u32, String)>,
    col: u32,
    bytes: usize,
}

impl Row {
    /// Adds `n` copies of a filled cell (within the sheet's columns), within the text limit.
    fn push(&mut self, t: String, n: u32, limits: &Limits) -> Result<()> {
        let n = n.min(MAX_COLUMNS.saturating_sub(self.col));
        self.bytes = self.bytes.saturating_add(t.len().saturating_mul(n as usize));
        text::check_growing(self.bytes, limits)?;
        for _ in 0..n {
            self.cells.push((self.col, t.clone()));
            self.col += 1;
        }
        Ok(())
    }

    fn skip(&mut self, n: u32) {
        self.col = self.col.saturating_add(n).min(MAX_COLUMNS);
    }
}
