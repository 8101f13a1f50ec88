//! Write jobs shared by every server on one store: `rhizome serve` replicas over one
//! PostgreSQL database take their job ids from it and keep each job's progress in it, so
//! that `GET /jobs/{id}` answers the same on every replica, whichever accepted the job.
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

/// The job table of a shared store.
pub trait JobBoard: Send + Sync {
    /// A new job accepted by `replica`: its id, unique among every server of the store.
    fn create(&self, replica: &str) -> Result<u64>;
    /// The job's progress now (JSON).
    fn update(&self, id: u64, view: &str) -> Result<()>;
    /// The job `id`, whichever server accepted it; None when unknown.
    fn get(&self, id: u64) -> Result<Option<SharedJob>>;
}
