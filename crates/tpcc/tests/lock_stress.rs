//! Seeded stress tests of the lock manager (`TPCC_SEED=…` replays one):
//! transactions take random shared/exclusive locks (with upgrades) on a few
//! hot names, from plain threads and as scheduler tasks. They prove mutual
//! exclusion (a shadow state per name that every holder checks), no lost
//! updates (read-yield-write counters under exclusive locks), no deadlock (all
//! transactions finish; a stall watchdog aborts the process with the seed),
//! and that lock waits make scheduler workers *blocked*.

mod common;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::seed;
use maestro_scheduler::Scheduler;
use maestro_tpcc::lock::{Grant, LockManager, LockMode, LockName, LockSpace, TxnTs};

/// Hot names: few enough that transactions collide constantly.
const NAMES: usize = 12;
/// A stalled run is reported after this long without any commit: far beyond
/// any wait in a healthy run, so it only fires on a real deadlock.
const STALL_LIMIT: Duration = Duration::from_secs(120);

struct Shared {
    locks: LockManager,
    /// Per name: 0 free, n > 0 shared holders, -1 an exclusive holder.
    shadow: Vec<AtomicI64>,
    /// Per name: incremented non-atomically (load, yield, store) under X.
    counters: Vec<AtomicU64>,
    commits: AtomicU64,
}

/// One transaction's plan: (name index, mode, upgrade after a shared grant).
type Plan = Vec<(usize, LockMode, bool)>;

fn plan(rng: &mut fastrand::Rng) -> Plan {
    (0..rng.usize(1..=5))
        .map(|_| {
            let mode = if rng.bool() {
                LockMode::Shared
            } else {
                LockMode::Exclusive
            };
            (rng.usize(..NAMES), mode, rng.u8(..5) == 0)
        })
        .collect()
}

fn lock_name(i: usize) -> LockName {
    LockName::new(LockSpace::Other, i as u64).unwrap()
}

impl Shared {
    fn new() -> Self {
        Shared {
            locks: LockManager::new(),
            shadow: (0..NAMES).map(|_| AtomicI64::new(0)).collect(),
            counters: (0..NAMES).map(|_| AtomicU64::new(0)).collect(),
            commits: AtomicU64::new(0),
        }
    }

    /// Takes one lock and updates the shadow; false if wait-die says die.
    fn take(&self, ts: TxnTs, i: usize, mode: LockMode, held: &mut Vec<(usize, LockMode)>) -> bool {
        let Ok(grant) = self.locks.acquire(ts, lock_name(i), mode) else {
            return false;
        };
        let shadow = &self.shadow[i];
        match (grant, mode) {
            (Grant::AlreadyHeld, _) => {}
            (Grant::Acquired, LockMode::Shared) => {
                let before = shadow.fetch_add(1, Ordering::SeqCst);
                assert!(before >= 0, "shared grant beside an exclusive holder");
                held.push((i, mode));
            }
            (Grant::Acquired, LockMode::Exclusive) => {
                let swap = shadow.compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst);
                assert_eq!(swap, Ok(0), "exclusive grant beside other holders");
                held.push((i, mode));
            }
            (Grant::Upgraded, _) => {
                let swap = shadow.compare_exchange(1, -1, Ordering::SeqCst, Ordering::SeqCst);
                assert_eq!(swap, Ok(1), "upgrade beside other holders");
                held.iter_mut()
                    .find(|h| h.0 == i)
                    .expect("upgraded a held lock")
                    .1 = mode;
            }
        }
        true
    }

    /// Releases everything, shadow first (so the next grantee sees it clean).
    fn release_all(&self, ts: TxnTs, held: &mut Vec<(usize, LockMode)>) {
        for (i, mode) in held.drain(..) {
            match mode {
                LockMode::Shared => self.shadow[i].fetch_sub(1, Ordering::SeqCst),
                LockMode::Exclusive => self.shadow[i].swap(0, Ordering::SeqCst),
            };
            assert!(self.locks.release(ts, lock_name(i)));
        }
    }

    /// Runs `plan` until it commits; returns the increments it made per name.
    fn run(&self, plan: &Plan, tally: &mut [u64]) -> u32 {
        let ts = self.locks.begin();
        let mut held = Vec::new();
        let mut deaths = 0;
        'attempt: loop {
            for &(i, mode, upgrade) in plan {
                let ok = self.take(ts, i, mode, &mut held)
                    && (!upgrade || self.take(ts, i, LockMode::Exclusive, &mut held));
                if !ok {
                    deaths += 1;
                    self.release_all(ts, &mut held);
                    self.locks
                        .wait_for_change(lock_name(i), LockMode::Exclusive);
                    continue 'attempt;
                }
            }
            for &(i, mode) in &held {
                if mode == LockMode::Exclusive {
                    let c = &self.counters[i];
                    let v = c.load(Ordering::SeqCst);
                    std::thread::yield_now();
                    c.store(v + 1, Ordering::SeqCst);
                    tally[i] += 1;
                }
            }
            self.release_all(ts, &mut held);
            self.commits.fetch_add(1, Ordering::Relaxed);
            return deaths;
        }
    }

    fn check(&self, seed: u64, tallies: &[Vec<u64>]) {
        for i in 0..NAMES {
            let expected: u64 = tallies.iter().map(|t| t[i]).sum();
            assert_eq!(
                self.counters[i].load(Ordering::SeqCst),
                expected,
                "seed {seed}: lost update on name {i}"
            );
            assert_eq!(self.shadow[i].load(Ordering::SeqCst), 0, "seed {seed}");
        }
        assert_eq!(self.locks.locks_in_use(), 0, "seed {seed}: leaked entries");
    }
}

/// Waits until `commits` reaches `total`, aborting the process (with the
/// seed) if it stops moving for [`STALL_LIMIT`]: a deadlock.
fn watch(shared: &Shared, total: u64, seed: u64) {
    let (mut last, mut since) = (0, Instant::now());
    loop {
        let now = shared.commits.load(Ordering::Relaxed);
        if now == total {
            return;
        }
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > STALL_LIMIT {
            eprintln!("seed {seed}: no commit for {STALL_LIMIT:?} at {now}/{total}: deadlock");
            std::process::abort();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn threads_keep_mutual_exclusion_and_never_deadlock() {
    let seed = seed();
    let (threads, per_thread) = (8, 1500);
    let shared = Shared::new();
    let tallies: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let shared = &shared;
                s.spawn(move || {
                    let mut rng = fastrand::Rng::with_seed(seed ^ ((t + 1) * 0x9E37_79B9));
                    let mut tally = vec![0; NAMES];
                    for _ in 0..per_thread {
                        shared.run(&plan(&mut rng), &mut tally);
                    }
                    tally
                })
            })
            .collect();
        watch(&shared, threads * per_thread, seed);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    shared.check(seed, &tallies);
    // Contention is near certain (holders yield while holding), but how much
    // depends on the OS scheduler, so it is printed rather than asserted.
    eprintln!("{:?}", shared.locks.stats());
}

#[test]
fn scheduler_tasks_keep_mutual_exclusion_and_never_deadlock() {
    let seed = seed();
    for preset in ["single-pool", "single-pool-nosys"] {
        let (clients, per_client) = (8, 400);
        let scheduler = Scheduler::with_preset(preset, 2).unwrap();
        let shared = Shared::new();
        let tallies: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..clients)
                .map(|t| {
                    let (shared, scheduler) = (&shared, &scheduler);
                    s.spawn(move || {
                        let mut rng = fastrand::Rng::with_seed(seed ^ ((t + 7) * 0x9E37_79B9));
                        let mut tally = vec![0; NAMES];
                        for _ in 0..per_client {
                            let plan = plan(&mut rng);
                            scheduler.install(|| shared.run(&plan, &mut tally));
                        }
                        tally
                    })
                })
                .collect();
            watch(&shared, clients * per_client, seed);
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        shared.check(seed, &tallies);
    }
}

#[test]
fn a_task_waiting_for_a_lock_is_a_blocked_worker() {
    let scheduler = Scheduler::with_preset("single-pool", 2).unwrap();
    let locks = LockManager::new();
    let x = lock_name(0);
    let (old, young) = (locks.begin(), locks.begin());
    locks.acquire(young, x, LockMode::Exclusive).unwrap();
    std::thread::scope(|s| {
        let task = s.spawn(|| scheduler.install(|| locks.acquire(old, x, LockMode::Exclusive)));
        // The task sleeps in the lock's condvar: the scheduler sees a blocked worker.
        while scheduler.stats().workers_blocked == 0 {
            std::thread::yield_now();
        }
        assert!(locks.release(young, x));
        assert_eq!(task.join().unwrap(), Ok(Grant::Acquired));
    });
    assert!(scheduler.stats().blocked_events >= 1);
    assert_eq!(locks.stats().waits, 1);
}
