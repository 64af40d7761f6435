//! Unit tests of the lock manager: modes, upgrades, wait-die decisions, and
//! waits that end in a grant or a death, for every latch flavour; and the
//! flavours' mutual exclusion under contention from threads and from scheduler
//! tasks (seeded: `TPCC_SEED=…` replays one). Cross-thread steps are ordered
//! by polling the lock table (never by sleeping a fixed time).

use std::sync::atomic::AtomicBool;

use maestro_scheduler::Scheduler;

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

/// Runs `test` on a fresh lock manager of each flavour.
fn for_each_flavour(test: impl Fn(&LockManager)) {
    for flavour in LatchFlavour::ALL {
        eprintln!("flavour {flavour}");
        let lm = LockManager::with_flavour(flavour);
        assert_eq!(lm.flavour(), flavour);
        test(&lm);
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
    for_each_flavour(|lm| {
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
    });
}

#[test]
fn older_waits_for_younger_and_gets_the_lock() {
    for_each_flavour(|lm| {
        let (old, young) = (lm.begin(), lm.begin());
        let x = name(2);
        lm.acquire(young, x, LockMode::Exclusive).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| lm.acquire(old, x, LockMode::Shared));
            until(|| waiting(lm, x) == 1);
            assert!(lm.release(young, x));
            assert_eq!(waiter.join().unwrap(), Ok(Grant::Acquired));
        });
        assert_eq!(lm.stats().waits, 1);
        assert!(lm.release(old, x));
        assert_eq!(lm.locks_in_use(), 0);
    });
}

#[test]
fn a_waiter_dies_when_an_older_transaction_joins_the_holders() {
    for_each_flavour(|lm| {
        let (oldest, middle, young) = (lm.begin(), lm.begin(), lm.begin());
        let x = name(3);
        lm.acquire(young, x, LockMode::Shared).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| lm.acquire(middle, x, LockMode::Exclusive));
            until(|| waiting(lm, x) == 1);
            // Compatible with the shared holder, so granted past the waiter, which
            // now waits for an older holder and must die instead.
            assert_eq!(lm.acquire(oldest, x, LockMode::Shared), Ok(Grant::Acquired));
            let died = waiter.join().unwrap().unwrap_err();
            assert_eq!(died.holder, oldest);
        });
        assert!(lm.release(oldest, x) && lm.release(young, x));
        assert_eq!(lm.locks_in_use(), 0);
    });
}

#[test]
fn two_upgraders_resolve_by_age() {
    for_each_flavour(|lm| {
        let (old, young) = (lm.begin(), lm.begin());
        let x = name(4);
        lm.acquire(old, x, LockMode::Shared).unwrap();
        lm.acquire(young, x, LockMode::Shared).unwrap();
        std::thread::scope(|s| {
            let upgrader = s.spawn(|| lm.acquire(old, x, LockMode::Exclusive));
            until(|| waiting(lm, x) == 1);
            assert!(lm.acquire(young, x, LockMode::Exclusive).is_err());
            assert!(lm.release(young, x));
            assert_eq!(upgrader.join().unwrap(), Ok(Grant::Upgraded));
        });
        assert!(lm.release(old, x));
    });
}

#[test]
fn backoff_returns_once_the_lock_is_free() {
    for_each_flavour(|lm| {
        let (old, young) = (lm.begin(), lm.begin());
        let x = name(5);
        lm.wait_for_change(x, LockMode::Exclusive); // never locked: returns at once
        lm.acquire(old, x, LockMode::Exclusive).unwrap();
        let died = lm.acquire(young, x, LockMode::Exclusive).unwrap_err();
        std::thread::scope(|s| {
            let backoff = s.spawn(|| lm.wait_for_change(died.name, died.mode));
            until(|| waiting(lm, x) == 1);
            assert!(lm.release(old, x));
            backoff.join().unwrap();
        });
        assert_eq!(
            lm.acquire(young, x, LockMode::Exclusive),
            Ok(Grant::Acquired)
        );
        assert!(lm.release(young, x));
        assert_eq!(lm.locks_in_use(), 0);
    });
}

/// The seed of a randomized test: `TPCC_SEED` if set, else a fresh one,
/// printed so that a failure can be replayed.
fn seed() -> u64 {
    let seed = std::env::var("TPCC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("seed {seed} (replay with TPCC_SEED={seed})");
    seed
}

/// `rounds` critical sections on `latch`, each a non-atomic read-modify-write
/// of the counter with a seeded pause in between; `inside` catches overlap.
/// Returns how many acquisitions found the latch held.
fn hammer(
    latch: &ShardLatch<u64>,
    inside: &AtomicBool,
    rng: &mut fastrand::Rng,
    rounds: u64,
) -> u64 {
    let mut contended = 0;
    for _ in 0..rounds {
        let (mut g, waited) = latch.lock_counted();
        contended += u64::from(waited);
        assert!(!inside.swap(true, Ordering::SeqCst), "two latch holders");
        let v = *g;
        for _ in 0..rng.u32(..64) {
            std::hint::spin_loop();
        }
        *g = v + 1;
        inside.store(false, Ordering::SeqCst);
    }
    contended
}

#[test]
fn every_flavour_excludes_between_threads() {
    let seed = seed();
    let (threads, rounds) = (4u64, 20_000u64);
    for flavour in LatchFlavour::ALL {
        let latch = ShardLatch::new(flavour, 0u64);
        assert_eq!(latch.flavour(), flavour);
        let inside = AtomicBool::new(false);
        let start = std::sync::Barrier::new(threads as usize);
        let contended: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (latch, inside, start) = (&latch, &inside, &start);
                    s.spawn(move || {
                        let mut rng = fastrand::Rng::with_seed(seed ^ (t + 1));
                        start.wait();
                        hammer(latch, inside, &mut rng, rounds)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(*latch.lock(), threads * rounds, "seed {seed}: {flavour}");
        // Contention depends on the OS scheduler: printed, not asserted.
        eprintln!("{flavour}: {contended} contended acquisitions");
    }
}

#[test]
fn every_flavour_excludes_between_scheduler_tasks() {
    let seed = seed();
    let scheduler = Scheduler::with_preset("single-pool", 2).unwrap();
    let (clients, tasks, rounds) = (6u64, 20u64, 1000u64);
    for flavour in LatchFlavour::ALL {
        let latch = ShardLatch::new(flavour, 0u64);
        let inside = AtomicBool::new(false);
        let contended: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..clients)
                .map(|c| {
                    let (latch, inside, scheduler) = (&latch, &inside, &scheduler);
                    s.spawn(move || {
                        let mut rng = fastrand::Rng::with_seed(seed ^ ((c + 1) << 32));
                        (0..tasks)
                            .map(|_| scheduler.install(|| hammer(latch, inside, &mut rng, rounds)))
                            .sum::<u64>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        eprintln!("{flavour}: {contended} contended acquisitions");
        assert_eq!(
            *latch.lock(),
            clients * tasks * rounds,
            "seed {seed}: {flavour}"
        );
    }
    eprintln!("{:?}", scheduler.stats());
}

/// Transactions on a few hot names, as scheduler tasks, per flavour: each
/// takes 1–3 exclusive locks (waiting or dying by wait-die, backing off and
/// retrying), then increments the names' counters non-atomically. A lost
/// update or an entry left behind fails; a deadlock hangs the test.
#[test]
fn lock_waits_keep_exclusion_under_every_flavour() {
    const HOT: usize = 4;
    let seed = seed();
    let scheduler = Scheduler::with_preset("single-pool", 2).unwrap();
    let (clients, txns) = (6u64, 150u64);
    for flavour in LatchFlavour::ALL {
        let lm = LockManager::with_flavour(flavour);
        let counters: Vec<AtomicU64> = (0..HOT).map(|_| AtomicU64::new(0)).collect();
        let expected: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..clients)
                .map(|c| {
                    let (lm, counters, scheduler) = (&lm, &counters, &scheduler);
                    s.spawn(move || {
                        let mut rng = fastrand::Rng::with_seed(seed ^ ((c + 1) << 40));
                        let mut increments = 0;
                        for _ in 0..txns {
                            let plan: Vec<usize> =
                                (0..rng.usize(1..=3)).map(|_| rng.usize(..HOT)).collect();
                            increments += scheduler.install(|| run_txn(lm, counters, &plan));
                        }
                        increments
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let total: u64 = counters.iter().map(|c| c.load(Ordering::SeqCst)).sum();
        assert_eq!(total, expected, "seed {seed}: lost update with {flavour}");
        assert_eq!(lm.locks_in_use(), 0, "seed {seed}: {flavour}");
        eprintln!("{flavour}: {:?}", lm.stats());
    }
}

/// Locks `plan`'s names exclusively until it gets them all, increments each
/// distinct name's counter once, releases; returns the increments made.
fn run_txn(lm: &LockManager, counters: &[AtomicU64], plan: &[usize]) -> u64 {
    let ts = lm.begin();
    'attempt: loop {
        let mut held = Vec::new();
        for &i in plan {
            let n = name(100 + i as u64);
            match lm.acquire(ts, n, LockMode::Exclusive) {
                Ok(Grant::Acquired) => held.push(n),
                Ok(_) => {}
                Err(died) => {
                    for &h in &held {
                        assert!(lm.release(ts, h));
                    }
                    lm.wait_for_change(died.name, died.mode);
                    continue 'attempt;
                }
            }
        }
        for &n in &held {
            let c = &counters[n.key() as usize - 100];
            let v = c.load(Ordering::SeqCst);
            std::thread::yield_now();
            c.store(v + 1, Ordering::SeqCst);
        }
        for &n in &held {
            assert!(lm.release(ts, n));
        }
        return held.len() as u64;
    }
}

#[test]
fn a_lock_wait_blocks_the_worker_under_every_flavour() {
    for flavour in LatchFlavour::ALL {
        let scheduler = Scheduler::with_preset("single-pool", 2).unwrap();
        let lm = LockManager::with_flavour(flavour);
        let x = name(6);
        let (old, young) = (lm.begin(), lm.begin());
        lm.acquire(young, x, LockMode::Exclusive).unwrap();
        std::thread::scope(|s| {
            let task = s.spawn(|| scheduler.install(|| lm.acquire(old, x, LockMode::Exclusive)));
            while scheduler.stats().workers_blocked == 0 {
                std::thread::yield_now();
            }
            assert!(lm.release(young, x));
            assert_eq!(task.join().unwrap(), Ok(Grant::Acquired));
        });
        assert!(scheduler.stats().blocked_events >= 1, "{flavour}");
        assert!(lm.release(old, x));
    }
}
