//! The one place where primitives sleep, with the *blocked* hook.

use std::time::Instant;

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
    // SAFETY: the callbacks neither panic nor call into parking_lot_core (the
    // before_sleep hook only updates atomic counters and may wake a worker through
    // its own Parker), and `key` is the address of a primitive borrowed by the caller
    // for the whole call.
    let r = unsafe {
        parking_lot_core::park(
            key,
            validate,
            || guard = crate::worker::enter_blocked(),
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
