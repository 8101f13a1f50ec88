//! A reader loan's snapshot: what every query of the loan would otherwise read again
//! (versions, data version, embedding model), read in one round trip when the loan starts.

use super::pool::Conn;
use super::refresh::PgResult;

/// What a reader loan read at its start, in one round trip ([`StoreRead::freshness`]): the
/// versions and the embedding model, which the loan's queries use instead of reading each
/// again (a query on a warm reader is then a few round trips: the freshness read, the
/// postings, the chunks). Writes through the same store drop it.
///
/// [`StoreRead::freshness`]: rhizome_core::StoreRead::freshness
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    pub graph: u64,
    pub reports: Option<u64>,
    /// What the search caches are keyed by ([`super::search`]).
    pub data: u64,
    pub model: Option<String>,
    pub dim: Option<usize>,
}

/// The keys a loan's [`Snapshot`] holds, read in one round trip.
const SNAPSHOT: &str = "SELECT key, value FROM meta WHERE key = ANY(ARRAY['graph_version', 'reports_version',
    'data_version', 'embedding_model', 'embedding_dim'])";

pub fn snapshot(c: &mut Conn) -> PgResult<Snapshot> {
    let mut s = Snapshot::default();
    for r in c.query(SNAPSHOT, &[])? {
        let value: String = r.get(1);
        match r.get::<_, &str>(0) {
            "graph_version" => s.graph = value.parse().unwrap_or(0),
            "reports_version" => s.reports = value.parse().ok(),
            "data_version" => s.data = value.parse().unwrap_or(0),
            "embedding_model" => s.model = Some(value),
            _ => s.dim = value.parse().ok(),
        }
    }
    Ok(s)
}
