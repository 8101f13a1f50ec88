//! Reading the parts of a ZIP container (DOCX, PPTX, EPUB, ODS, and XLSX before calamine
//! reads it) within [`Limits::max_decompressed`]: sizes are counted as the bytes come out of
//! the decompressor, never taken from the headers.

use std::io::{self, Cursor, Read};

use zip::result::ZipError;
use zip::ZipArchive;

use crate::{Limits, ReadError, Result};

/// More entries than any document needs; a central directory listing more is refused.
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// The signature of an OLE compound file, which is what an encrypted OOXML file is.
const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// An open container and what is left of its decompression budget.
pub(crate) struct Zip<'a> {
    archive: ZipArchive<Cursor<&'a [u8]>>,
    limit: u64,
    left: u64,
}

/// Fails for an OLE compound file given as an Office Open XML one: encrypted when it holds
/// an `EncryptedPackage` stream (how Office saves a password-protected file), else a
/// legacy binary file with a new name.
pub(crate) fn check_not_ole(bytes: &[u8]) -> Result<()> {
    if !bytes.starts_with(&OLE_MAGIC[..4]) {
        return Ok(());
    }
    let marker: Vec<u8> = "EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes).collect();
    if bytes.windows(marker.len()).any(|w| w == marker.as_slice()) {
        Err(ReadError::Encrypted("password-protected Office file".into()))
    } else {
        Err(ReadError::damaged(
            "an OLE compound file (a legacy .doc/.xls/.ppt?), not Office Open XML: \
             save it as .docx/.xlsx/.pptx",
        ))
    }
}

impl<'a> Zip<'a> {
    /// Opens `bytes` as a ZIP archive of at most [`MAX_ENTRIES`] entries.
    pub(crate) fn open(bytes: &'a [u8], limits: &Limits) -> Result<Self> {
        if !bytes.starts_with(b"PK") {
            return Err(ReadError::damaged("not a ZIP container"));
        }
        let archive = ZipArchive::new(Cursor::new(bytes)).map_err(zip_error)?;
        if archive.len() > MAX_ENTRIES {
            return Err(ReadError::TooLarge(format!(
                "{} entries in the container, more than {MAX_ENTRIES}",
                archive.len()
            )));
        }
        let limit = limits.max_decompressed;
        Ok(Zip { archive, limit, left: limit })
    }

    /// The entry named `name` (exactly, else ignoring ASCII case and a leading `/`).
    fn find(&self, name: &str) -> Option<usize> {
        let name = name.trim_start_matches('/');
        self.archive.index_for_name(name).or_else(|| {
            (0..self.archive.len()).find(|&i| {
                self.archive.name_for_index(i).is_some_and(|n| n.trim_start_matches('/').eq_ignore_ascii_case(name))
            })
        })
    }

    /// Whether the container has an entry named `name`.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The decompressed bytes of entry `name`, `None` when there is none.
    pub(crate) fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(i) = self.find(name) else {
            return Ok(None);
        };
        let mut buf = Vec::new();
        self.read_index(i, name, &mut buf)?;
        Ok(Some(buf))
    }

    /// The entry `name` as text (see [`crate::xml::decode`]), `None` when there is none.
    pub(crate) fn read_text(&mut self, name: &str) -> Result<Option<String>> {
        Ok(self.read(name)?.map(|b| crate::xml::decode(&b)))
    }

    /// Decompresses every entry without keeping it: proves the whole container fits the
    /// budget before a reader that has no budget of its own (calamine) opens it.
    pub(crate) fn check_all(&mut self) -> Result<()> {
        for i in 0..self.archive.len() {
            let name = self.archive.name_for_index(i).unwrap_or("?").to_string();
            self.read_index(i, &name, &mut io::sink())?;
        }
        Ok(())
    }

    fn read_index(&mut self, i: usize, name: &str, out: &mut dyn io::Write) -> Result<()> {
        let limit = self.limit;
        let too_large = || ReadError::TooLarge(format!("{name} decompresses past the {limit}-byte limit"));
        let mut file = self.archive.by_index(i).map_err(zip_error)?;
        if file.size() > self.left {
            return Err(too_large()); // the header already says so
        }
        let mut capped = (&mut file).take(self.left + 1);
        let n = io::copy(&mut capped, out).map_err(|e| ReadError::Damaged(format!("{name}: {e}")))?;
        if n > self.left {
            return Err(too_large());
        }
        self.left -= n;
        Ok(())
    }
}

fn zip_error(e: ZipError) -> ReadError {
    match e {
        ZipError::UnsupportedArchive(ZipError::PASSWORD_REQUIRED) | ZipError::InvalidPassword => {
            ReadError::Encrypted("password-protected ZIP entries".into())
        }
        e => ReadError::damaged(format_args!("not a readable ZIP container ({e})")),
    }
}
