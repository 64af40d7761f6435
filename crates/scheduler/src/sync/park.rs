//! The one place where primitives sleep, with the *blocked* hook.

use std::time::Instant;

use crate::abort::AbortOnDrop;

use parking_lot_core::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, ParkResult, UnparkResult};

/// Parks the thread on `key` if `validate()` holds (checked under the parking lot's
/// bucket lock, so a concurrent unpark on `key` is never missed). A worker is marked
/// *blocked* just before it sleeps and *active* after it wakes.
pub(crate) fn park_blocked(
    key: usize,
    validate: impl FnOnce() -> bool,
    deadline: Option<Instant>,
) -> ParkResult {
    let mut guard = None;
    // SAFETY: the callbacks do not call into parking_lot_core (the before_sleep
    // hook only updates atomic counters and may wake a worker through its own
    // Parker, under std locks only: `shared::hooksafe`), and cannot unwind into it:
    // the hook runs under an abort guard (a panic there — an accounting invariant
    // of `counts` failing — aborts the process), the timeout callback is empty and
    // `validate` only loads atomics. `key` is the address of a primitive borrowed
    // by the caller for the whole call.
    let r = unsafe {
        parking_lot_core::park(
            key,
            validate,
            || {
                let abort = AbortOnDrop::arm("the before-sleep hook inside parking_lot_core::park");
                #[cfg(test)]
                tests::maybe_panic_in_hook();
                guard = crate::worker::enter_blocked();
                abort.disarm();
            },
            |_, _| {},
            DEFAULT_PARK_TOKEN,
            deadline,
        )
    };
    drop(guard);
    r
}

/// Wakes one thread parked on `key`; `callback` runs under the bucket lock.
pub(crate) fn unpark_one(key: usize, callback: impl FnOnce(UnparkResult)) -> UnparkResult {
    // SAFETY: the callback does not call into parking_lot_core and does not panic.
    unsafe {
        parking_lot_core::unpark_one(key, |r| {
            callback(r);
            DEFAULT_UNPARK_TOKEN
        })
    }
}

/// Wakes every thread parked on `key`.
pub(crate) fn unpark_all(key: usize) -> usize {
    // SAFETY: `key` is only hashed, never dereferenced.
    unsafe { parking_lot_core::unpark_all(key, DEFAULT_UNPARK_TOKEN) }
}

/// Spins that precede parking in the locks. Guessed (parking_lot spins ~10 rounds).
pub(crate) const LOCK_SPIN_ROUNDS: u32 = 10;

pub(crate) fn spin(round: u32) {
    if round < 4 {
        for _ in 0..(1 << round) {
            std::hint::spin_loop();
        }
    } else {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::abort::{in_child, run_in_child};

    thread_local! {
        static PANIC_IN_HOOK: Cell<bool> = const { Cell::new(false) };
    }

    /// Test hook: makes the next before-sleep callback on this thread panic.
    pub(super) fn maybe_panic_in_hook() {
        if PANIC_IN_HOOK.with(|p| p.replace(false)) {
            panic!("injected panic in the before-sleep hook");
        }
    }

    #[test]
    fn a_panicking_before_sleep_hook_aborts_instead_of_unwinding_through_park() {
        if in_child() {
            PANIC_IN_HOOK.with(|p| p.set(true));
            let key = &PANIC_IN_HOOK as *const _ as usize;
            // Validation holds, so the hook runs; the deadline ends the sleep if
            // the hook (wrongly) returned.
            let deadline = Instant::now() + std::time::Duration::from_millis(10);
            let r = std::panic::catch_unwind(|| park_blocked(key, || true, Some(deadline)));
            println!("park returned: unwound = {}", r.is_err());
            return;
        }
        let (status, stderr) = run_in_child(
            "sync::park::tests::a_panicking_before_sleep_hook_aborts_instead_of_unwinding_through_park",
        );
        assert!(
            !status.success(),
            "the child must abort: {status:?}\n{stderr}"
        );
        assert!(
            stderr.contains("fatal: unwinding out of the before-sleep hook"),
            "{stderr}"
        );
    }
}
