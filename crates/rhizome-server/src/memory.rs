//! The C allocator's behaviour in a long-running server (glibc; nothing elsewhere).
//!
//! glibc gives a thread that finds the main heap busy an arena of its own, up to 8 per
//! core, and hands freed memory inside an arena back to the system only from the arena's
//! top. A server runs queries on many threads (tokio's, the blocking pool's, rayon's), so
//! under load memory spreads over 16 arenas on 2 cores and stays there: `rhizome bench
//! load` (16 clients, the index held near 80 documents by uploads and deletes) grew from
//! 713 to 861 MiB between minutes 1 and 5, against 327 to 372 MiB with 2 arenas.

/// Allow one arena per core (at least 2), unless `MALLOC_ARENA_MAX` says otherwise
/// (glibc read it at start). Call once, early, before the server's threads start.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
            return;
        }
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
        // SAFETY: mallopt only changes a tunable of the allocator; M_ARENA_MAX takes any
        // positive count.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, cores as libc::c_int);
        }
    }
}

/// Return the free memory at the top of every arena and any free whole pages inside them
/// to the system: after a write job, which allocates and frees much (parsed files, batches,
/// vectors) on a thread of its own.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free.
    unsafe {
        libc::malloc_trim(0);
    }
}
