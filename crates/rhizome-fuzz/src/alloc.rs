//! Memory bound: a counting global allocator (installed by the fuzz binary and its tests
//! with `#[global_allocator]`). The runner reads the peak of live bytes over each input;
//! an allocation that would take the process past [`HARD_CAP`] is refused, so a memory
//! bomb ends the run ("memory allocation failed") instead of the machine.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Live bytes past which allocations are refused.
pub const HARD_CAP: usize = 4 << 30;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicUsize = AtomicUsize::new(0);

/// The counting allocator (forwards to the system allocator).
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !grow(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc(layout);
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !grow(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !grow(new_size - old) {
            return std::ptr::null_mut();
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            if new_size > old {
                LIVE.fetch_sub(new_size - old, Ordering::Relaxed);
            }
        } else if new_size < old {
            LIVE.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        p
    }
}

/// Count `n` more live bytes unless that passes the hard cap.
fn grow(n: usize) -> bool {
    INSTALLED.store(1, Ordering::Relaxed);
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    if now > HARD_CAP {
        LIVE.fetch_sub(n, Ordering::Relaxed);
        return false;
    }
    PEAK.fetch_max(now, Ordering::Relaxed);
    true
}

/// Whether the counting allocator is the global one (it has counted something).
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed) == 1
}

/// Live bytes now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Start measuring a peak: returns the live bytes now.
pub fn reset_peak() -> usize {
    let now = live();
    PEAK.store(now, Ordering::Relaxed);
    now
}

/// Highest live bytes since [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}
