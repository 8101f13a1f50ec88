//! Write jobs shared by every server on one store: `rhizome serve` replicas over one
//! PostgreSQL database take their job ids from it and keep each job's progress in it, so
//! that `GET /jobs/{id}` answers the same on every replica, whichever accepted the job.
//! On such a store an accepted upload is kept there too, until indexed, leased to the
//! replica running it: a replica that dies lets its lease run out, and another claims the
//! upload and runs it under the same job id.
//! A store that cannot be shared by several servers has no board
//! ([`crate::StoreUrl::job_board`] is None): its server numbers its jobs itself.

use rhizome_core::Result;

/// A job as the board keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedJob {
    /// The server that accepted the job (host, pid, address).
    pub replica: String,
    /// The job's last progress as that server wrote it (JSON); None until its first write.
    pub view: Option<String>,
    /// Seconds since that server last wrote it.
    pub age_secs: u64,
}

/// An upload kept on the board, as claimed by a replica.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingUpload {
    pub id: u64,
    /// What the server kept (its own encoding of the files or texts).
    pub payload: Vec<u8>,
    /// Times a replica claimed it after the one that accepted it.
    pub claims: u32,
}

/// The job table of a shared store.
pub trait JobBoard: Send + Sync {
    /// A new job accepted by `replica`: its id, unique among every server of the store.
    fn create(&self, replica: &str) -> Result<u64>;
    /// The job's progress now (JSON).
    fn update(&self, id: u64, view: &str) -> Result<()>;
    /// The job `id`, whichever server accepted it; None when unknown.
    fn get(&self, id: u64) -> Result<Option<SharedJob>>;
    /// Keep upload `id` until [`JobBoard::forget_upload`], leased to `replica` for
    /// `lease_secs`; false (nothing kept) when the uploads kept would exceed `max_bytes`
    /// in all.
    fn keep_upload(&self, id: u64, replica: &str, payload: &[u8], lease_secs: u64, max_bytes: u64) -> Result<bool>;
    /// Extend every lease `replica` holds to `lease_secs` from now.
    fn renew(&self, replica: &str, lease_secs: u64) -> Result<()>;
    /// Take the oldest upload whose lease ran out (its replica died or stopped): leased to
    /// `replica` from now, its job now `replica`'s. Two replicas never take the same one.
    fn claim(&self, replica: &str, lease_secs: u64) -> Result<Option<PendingUpload>>;
    /// Remove upload `id` (indexed, or failed for good).
    fn forget_upload(&self, id: u64) -> Result<()>;
    /// End `replica`'s leases now (it stops): another replica may claim its uploads at once.
    fn release(&self, replica: &str) -> Result<()>;
    /// Uploads kept, whoever holds them.
    fn pending_uploads(&self) -> Result<u64>;
}
