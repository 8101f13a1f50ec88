//! A parquet file read into rows of plain values with the `parquet` crate's record API
//! (no arrow). Only the columns asked for are read; each is found by its name or one of
//! its older names, and a missing required column is an error that names the file, the
//! column and what it should hold.

use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use parquet::schema::types::Type;
use rhizome_core::{Error, Result};

/// One value of a cell: what GraphRAG's tables hold, without arrow's types.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Cell>),
    /// A struct: its fields by name, in schema order.
    Struct(Vec<(String, Cell)>),
}

impl Cell {
    fn from_field(f: Field) -> Cell {
        match f {
            Field::Null => Cell::Null,
            Field::Bool(b) => Cell::Bool(b),
            Field::Byte(x) => Cell::Int(x.into()),
            Field::Short(x) => Cell::Int(x.into()),
            Field::Int(x) => Cell::Int(x.into()),
            Field::Long(x) => Cell::Int(x),
            Field::UByte(x) => Cell::Int(x.into()),
            Field::UShort(x) => Cell::Int(x.into()),
            Field::UInt(x) => Cell::Int(x.into()),
            Field::ULong(x) => i64::try_from(x).map(Cell::Int).unwrap_or(Cell::Float(x as f64)),
            Field::Float16(x) => Cell::Float(f32::from(x).into()),
            Field::Float(x) => Cell::Float(x.into()),
            Field::Double(x) => Cell::Float(x),
            Field::Str(s) => Cell::Str(s),
            Field::Bytes(b) => Cell::Str(String::from_utf8_lossy(b.data()).into_owned()),
            Field::Group(row) => {
                Cell::Struct(row.into_columns().into_iter().map(|(k, v)| (k, Cell::from_field(v))).collect())
            }
            Field::ListInternal(list) => Cell::List(list.elements().iter().cloned().map(Cell::from_field).collect()),
            // Dates, times, decimals and maps: as the crate prints them (GraphRAG keeps its
            // dates as strings; these are not read as anything else).
            other => Cell::Str(other.to_string()),
        }
    }

    /// Text of a scalar (numbers as written); None for null, lists and structs.
    pub fn text(&self) -> Option<String> {
        match self {
            Cell::Str(s) => Some(s.clone()),
            Cell::Int(i) => Some(i.to_string()),
            Cell::Float(x) => Some(x.to_string()),
            Cell::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// An integer (also from an integral float or a numeric string, as older versions wrote
    /// community numbers and levels as strings).
    pub fn int(&self) -> Option<i64> {
        match self {
            Cell::Int(i) => Some(*i),
            Cell::Float(x) if x.is_finite() && x.fract() == 0.0 => Some(*x as i64),
            Cell::Str(s) => s
                .trim()
                .parse::<i64>()
                .ok()
                .or_else(|| s.trim().parse::<f64>().ok().filter(|x| x.fract() == 0.0).map(|x| x as i64)),
            _ => None,
        }
    }

    pub fn float(&self) -> Option<f64> {
        match self {
            Cell::Float(x) if x.is_finite() => Some(*x),
            Cell::Int(i) => Some(*i as f64),
            Cell::Str(s) => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
            _ => None,
        }
    }

    /// The strings of a list (a single string counts as a list of one: older versions keep
    /// one document id where newer ones keep a list, or the other way round).
    pub fn strings(&self) -> Vec<String> {
        match self {
            Cell::List(items) => items.iter().filter_map(Cell::text).collect(),
            Cell::Null => Vec::new(),
            scalar => scalar.text().into_iter().filter(|s| !s.is_empty()).collect(),
        }
    }

    /// The integers of a list.
    pub fn ints(&self) -> Vec<i64> {
        match self {
            Cell::List(items) => items.iter().filter_map(Cell::int).collect(),
            _ => Vec::new(),
        }
    }

    /// A field of a struct, by name.
    pub fn field(&self, name: &str) -> Option<&Cell> {
        match self {
            Cell::Struct(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// A column to read: its current name, older names accepted for it, whether the table is
/// unusable without it, and what it holds (for the error message).
pub struct Col {
    pub names: &'static [&'static str],
    pub required: bool,
    pub what: &'static str,
}

/// Shorthand for a required column.
pub const fn req(names: &'static [&'static str], what: &'static str) -> Col {
    Col { names, required: true, what }
}

/// Shorthand for an optional column (its cells are [`Cell::Null`] when it is absent).
pub const fn opt(names: &'static [&'static str], what: &'static str) -> Col {
    Col { names, required: false, what }
}

/// The asked-for columns of a table, one cell per column in the order asked.
#[derive(Debug)]
pub struct Table {
    pub path: PathBuf,
    /// For each asked-for column, the name it was found under (None: absent).
    pub found: Vec<Option<String>>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// Whether column `i` (in the order asked) is in the file.
    pub fn has(&self, i: usize) -> bool {
        self.found.get(i).is_some_and(Option::is_some)
    }
}

fn parquet_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::bad_input(
        path.display().to_string(),
        format!("not a readable parquet file ({e}); expected a table written by Microsoft GraphRAG"),
    )
}

/// Read the columns `cols` of the parquet file at `path`.
///
/// The `parquet` crate asserts (panics) on some damaged files where it should return an
/// error (a column chunk with a negative offset, a dictionary-encoded page without its
/// dictionary: both found by rhizome-fuzz). Column chunk ranges are checked against the
/// file first, with a message that says what is wrong; the rest runs under
/// [`rhizome_core::panic_guard`], so a damaged file is an error naming it, never a crash.
pub fn read_table(path: &Path, cols: &[Col]) -> Result<Table> {
    match rhizome_core::panic_guard::catch(|| read_table_unguarded(path, cols)) {
        Ok(r) => r,
        Err(panic) => Err(parquet_error(path, format!("damaged: {panic}"))),
    }
}

/// Every column chunk's byte range must lie inside the file.
fn check_ranges(path: &Path, reader: &SerializedFileReader<std::fs::File>, file_len: u64) -> Result<()> {
    for (g, rg) in reader.metadata().row_groups().iter().enumerate() {
        for c in rg.columns() {
            let start = c.dictionary_page_offset().unwrap_or_else(|| c.data_page_offset());
            let len = c.compressed_size();
            let end = start.checked_add(len);
            if start < 0 || len < 0 || end.is_none_or(|e| e as u64 > file_len) {
                return Err(parquet_error(
                    path,
                    format!(
                        "damaged or truncated: column `{}` of row group {g} claims bytes {start}..+{len} \
                         of a {file_len}-byte file",
                        c.column_path()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn read_table_unguarded(path: &Path, cols: &[Col]) -> Result<Table> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let reader = SerializedFileReader::new(file).map_err(|e| parquet_error(path, e))?;
    check_ranges(path, &reader, file_len)?;
    let schema = reader.metadata().file_metadata().schema();
    let fields = schema.get_fields();
    let mut found = Vec::with_capacity(cols.len());
    for c in cols {
        let hit = c.names.iter().find(|n| fields.iter().any(|f| f.name() == **n));
        if hit.is_none() && c.required {
            let present: Vec<&str> = fields.iter().map(|f| f.name()).collect();
            let alternatives = if c.names.len() > 1 {
                format!(" (or {})", c.names[1..].iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))
            } else {
                String::new()
            };
            return Err(Error::bad_input(
                path.display().to_string(),
                format!(
                    "missing column `{}`{alternatives}: expected {}; the file has columns: {}",
                    c.names[0],
                    c.what,
                    present.join(", ")
                ),
            ));
        }
        found.push(hit.map(|n| n.to_string()));
    }
    // Read only the columns asked for (in file order, as a projection must be).
    let wanted: Vec<_> = fields.iter().filter(|f| found.iter().flatten().any(|n| n == f.name())).cloned().collect();
    let mut rows = Vec::new();
    if wanted.is_empty() {
        return Ok(Table { path: path.to_path_buf(), found, rows });
    }
    let projection =
        Type::group_type_builder(schema.name()).with_fields(wanted).build().map_err(|e| parquet_error(path, e))?;
    let iter = reader.get_row_iter(Some(projection)).map_err(|e| parquet_error(path, e))?;
    for row in iter {
        let row = row.map_err(|e| parquet_error(path, e))?;
        let by_name: Vec<(String, Field)> = row.into_columns();
        let cells = found
            .iter()
            .map(|name| {
                name.as_ref()
                    .and_then(|n| by_name.iter().find(|(k, _)| k == n))
                    .map(|(_, f)| Cell::from_field(f.clone()))
                    .unwrap_or(Cell::Null)
            })
            .collect();
        rows.push(cells);
    }
    Ok(Table { path: path.to_path_buf(), found, rows })
}
