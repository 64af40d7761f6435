//! Unit tests of the lock manager: modes, upgrades, wait-die decisions, and
//! waits that end in a grant or a death. Cross-thread steps are ordered by
//! polling the lock table (never by sleeping a fixed time).

use super::*;

fn name(key: u64) -> LockName {
    LockName::new(LockSpace::Other, key).unwrap()
}

/// Polls until `cond` holds (the tests' only way to sequence threads).
fn until(cond: impl Fn() -> bool) {
    while !cond() {
        std::thread::yield_now();
    }
}

/// How many requests currently wait on `n`.
fn waiting(lm: &LockManager, n: LockName) -> u32 {
    lm.shard(n)
        .state
        .lock()
        .entries
        .get(&n.word())
        .map_or(0, |e| e.waiting)
}

#[test]
fn modes_upgrades_and_releases() {
    let lm = LockManager::new();
    let (a, b) = (lm.begin(), lm.begin());
    assert!(a < b);
    let x = name(1);
    assert_eq!(lm.acquire(a, x, LockMode::Shared), Ok(Grant::Acquired));
    assert_eq!(lm.acquire(a, x, LockMode::Shared), Ok(Grant::AlreadyHeld));
    assert_eq!(lm.acquire(b, x, LockMode::Shared), Ok(Grant::Acquired));
    // b is younger than the other shared holder a: its upgrade dies.
    let died = lm.acquire(b, x, LockMode::Exclusive).unwrap_err();
    assert_eq!((died.name, died.holder), (x, a));
    assert!(lm.release(b, x) && !lm.release(b, x));
    assert_eq!(lm.acquire(a, x, LockMode::Exclusive), Ok(Grant::Upgraded));
    assert_eq!(lm.acquire(a, x, LockMode::Shared), Ok(Grant::AlreadyHeld));
    assert!(lm.acquire(b, x, LockMode::Shared).is_err());
    assert!(lm.release(a, x));
    assert_eq!(lm.locks_in_use(), 0);
    let s = lm.stats();
    assert_eq!((s.acquired, s.deaths, s.waits), (3, 2, 0));
}

#[test]
fn older_waits_for_younger_and_gets_the_lock() {
    let lm = LockManager::new();
    let (old, young) = (lm.begin(), lm.begin());
    let x = name(2);
    lm.acquire(young, x, LockMode::Exclusive).unwrap();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| lm.acquire(old, x, LockMode::Shared));
        until(|| waiting(&lm, x) == 1);
        assert!(lm.release(young, x));
        assert_eq!(waiter.join().unwrap(), Ok(Grant::Acquired));
    });
    assert_eq!(lm.stats().waits, 1);
    assert!(lm.release(old, x));
    assert_eq!(lm.locks_in_use(), 0);
}

#[test]
fn a_waiter_dies_when_an_older_transaction_joins_the_holders() {
    let lm = LockManager::new();
    let (oldest, middle, young) = (lm.begin(), lm.begin(), lm.begin());
    let x = name(3);
    lm.acquire(young, x, LockMode::Shared).unwrap();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| lm.acquire(middle, x, LockMode::Exclusive));
        until(|| waiting(&lm, x) == 1);
        // Compatible with the shared holder, so granted past the waiter, which
        // now waits for an older holder and must die instead.
        assert_eq!(lm.acquire(oldest, x, LockMode::Shared), Ok(Grant::Acquired));
        let died = waiter.join().unwrap().unwrap_err();
        assert_eq!(died.holder, oldest);
    });
    assert!(lm.release(oldest, x) && lm.release(young, x));
    assert_eq!(lm.locks_in_use(), 0);
}

#[test]
fn two_upgraders_resolve_by_age() {
    let lm = LockManager::new();
    let (old, young) = (lm.begin(), lm.begin());
    let x = name(4);
    lm.acquire(old, x, LockMode::Shared).unwrap();
    lm.acquire(young, x, LockMode::Shared).unwrap();
    std::thread::scope(|s| {
        let upgrader = s.spawn(|| lm.acquire(old, x, LockMode::Exclusive));
        until(|| waiting(&lm, x) == 1);
        assert!(lm.acquire(young, x, LockMode::Exclusive).is_err());
        assert!(lm.release(young, x));
        assert_eq!(upgrader.join().unwrap(), Ok(Grant::Upgraded));
    });
    assert!(lm.release(old, x));
}

#[test]
fn backoff_returns_once_the_lock_is_free() {
    let lm = LockManager::new();
    let (old, young) = (lm.begin(), lm.begin());
    let x = name(5);
    lm.wait_for_change(x, LockMode::Exclusive); // never locked: returns at once
    lm.acquire(old, x, LockMode::Exclusive).unwrap();
    let died = lm.acquire(young, x, LockMode::Exclusive).unwrap_err();
    std::thread::scope(|s| {
        let backoff = s.spawn(|| lm.wait_for_change(died.name, died.mode));
        until(|| waiting(&lm, x) == 1);
        assert!(lm.release(old, x));
        backoff.join().unwrap();
    });
    assert_eq!(
        lm.acquire(young, x, LockMode::Exclusive),
        Ok(Grant::Acquired)
    );
    assert!(lm.release(young, x));
    assert_eq!(lm.locks_in_use(), 0);
}
