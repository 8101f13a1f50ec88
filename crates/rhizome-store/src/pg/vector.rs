//! pgvector's `vector` in its binary form, both ways: the dimension (u16), an unused u16,
//! then the floats, all big-endian. Going through `real[]` instead had the server build
//! or parse an array per row and cast it (most of the server's time loading a kind's
//! vectors, and of writing a batch's); the binary form is copied in and out as stored.

use std::io::Write;

use postgres::types::{FromSql, Type};
use postgres::GenericClient;

/// A `vector` value.
pub struct PgVector(pub Vec<f32>);

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl<'a> FromSql<'a> for PgVector {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<PgVector, BoxError> {
        let (head, body) = raw.split_at_checked(4).ok_or("vector: fewer than 4 bytes")?;
        let dim = u16::from_be_bytes([head[0], head[1]]) as usize;
        if body.len() != dim * 4 {
            return Err(format!("vector: {} bytes for {dim} dimensions", body.len()).into());
        }
        Ok(PgVector(body.chunks_exact(4).map(|b| f32::from_be_bytes([b[0], b[1], b[2], b[3]])).collect()))
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "vector"
    }
}

/// One row of the COPY binary format: fields as (length, bytes).
fn put_field(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// `rows` (kind, id, vector) into the staging table `st_vectors` by binary COPY, the
/// vectors in pgvector's binary form (written by hand: the client's COPY writer takes
/// only types it knows, and `vector` is an extension's). Vectors longer than a `vector`
/// holds are refused by the server, as the cast was.
pub fn copy_vectors<'a>(
    c: &mut impl GenericClient,
    rows: impl Iterator<Item = (&'a str, &'a str, &'a [f32])>,
) -> Result<(), postgres::Error> {
    let mut rows = rows.peekable();
    if rows.peek().is_none() {
        return Ok(());
    }
    let mut w = c.copy_in("COPY st_vectors(kind, id, vec) FROM STDIN (FORMAT binary)")?;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(b"PGCOPY\n\xff\r\n\0");
    buf.extend_from_slice(&[0; 8]);
    for (kind, id, v) in rows {
        buf.extend_from_slice(&3i16.to_be_bytes());
        put_field(&mut buf, kind.as_bytes());
        put_field(&mut buf, id.as_bytes());
        buf.extend_from_slice(&((4 + 4 * v.len()) as i32).to_be_bytes());
        buf.extend_from_slice(&(v.len().min(u16::MAX as usize) as u16).to_be_bytes());
        buf.extend_from_slice(&[0, 0]);
        for x in v {
            buf.extend_from_slice(&x.to_be_bytes());
        }
        if buf.len() >= 1 << 20 {
            // A failed write ends the COPY: finish() then reports the server's reason.
            let _ = w.write_all(&buf);
            buf.clear();
        }
    }
    buf.extend_from_slice(&(-1i16).to_be_bytes());
    let _ = w.write_all(&buf);
    w.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_vectors_are_read_and_bad_ones_refused() {
        let raw = [0u8, 2, 0, 0, 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0];
        assert_eq!(PgVector::from_sql(&Type::BYTEA, &raw).map(|v| v.0).ok(), Some(vec![1.0, -2.0]));
        assert!(PgVector::from_sql(&Type::BYTEA, &raw[..10]).is_err());
        assert!(PgVector::from_sql(&Type::BYTEA, &raw[..2]).is_err());
    }
}
