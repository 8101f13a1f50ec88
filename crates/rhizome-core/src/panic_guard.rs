//! A last guard around third-party code that may panic on malformed input (the `parquet`
//! crate asserts on some damaged files instead of returning an error). [`catch`] turns such
//! a panic into an error message; while it runs, [`active`] is true on that thread, so a
//! panic hook can tell a guarded panic from a bug: [`install_quiet_hook`] keeps the default
//! hook's "thread panicked" report for real bugs only, and the fuzzer does not count a
//! guarded panic as a failure.
//!
//! Use it only where the input, not Rhizome's own code, is what is broken, and where
//! nothing shared is left half-changed by an unwind (a reader over a file is; a store
//! write is not).

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Whether the current thread is inside [`catch`].
pub fn active() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Run `f`; a panic inside it comes back as `Err(message)`.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    DEPTH.with(|d| d.set(d.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    r.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic with a non-string payload".into())
    })
}

/// Wrap the process's panic hook so that a panic inside [`catch`] prints nothing (its
/// message reaches the user as the error it becomes); any other panic is reported as
/// before. Idempotent.
pub fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !active() {
                previous(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guarded_panic_is_an_error_and_the_guard_ends_with_it() {
        install_quiet_hook();
        assert!(!active());
        let r: Result<(), String> = catch(|| {
            assert!(active());
            panic!("column start should not be negative")
        });
        assert_eq!(r.unwrap_err(), "column start should not be negative");
        assert!(!active());
        assert_eq!(catch(|| 7).unwrap(), 7);
    }
}
