//! Seeded stress tests of the lock manager (`TPCC_SEED=…` replays one):
//! transactions take random shared/exclusive locks (with upgrades) on a few
//! hot names, from plain threads and as scheduler tasks; a deadlock victim
//! releases everything and retries as its next attempt. They prove mutual
//! exclusion (a shadow state per name that every holder checks), no lost
//! updates (read-yield-write counters under exclusive locks), that every
//! deadlock is detected (all transactions finish; a stall watchdog aborts the
//! process with the seed), that every attempt either committed or was a
//! victim, that nothing leaks (no entries, no wait-for graph nodes), and that
//! lock waits make scheduler workers *blocked*.

mod common;

use std::io::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::seed;
use maestro_scheduler::Scheduler;
use maestro_tpcc::lock::{Deadlock, Grant, LockManager, LockMode, LockName, LockSpace, TxnTs};

/// Hot names: few enough that transactions collide constantly.
const NAMES: usize = 12;
/// A stalled run is reported after this long without any commit: far beyond
/// any wait in a healthy run (guessed; commits come every few ms), so it only
/// fires on an undetected deadlock or a lost wake-up. `LOCK_STRESS_STALL_S`
/// shortens it for a loop that hunts a rare stall.
fn stall_limit() -> Duration {
    let secs = std::env::var("LOCK_STRESS_STALL_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    Duration::from_secs(secs)
}

struct Shared {
    locks: LockManager,
    /// Per name: 0 free, n > 0 shared holders, -1 an exclusive holder.
    shadow: Vec<AtomicI64>,
    /// Per name: incremented non-atomically (load, yield, store) under X.
    counters: Vec<AtomicU64>,
    commits: AtomicU64,
    /// Attempts that ended as deadlock victims.
    victims: AtomicU64,
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
            victims: AtomicU64::new(0),
        }
    }

    /// Takes one lock and updates the shadow; `Err` if chosen as a victim.
    fn take(
        &self,
        ts: TxnTs,
        i: usize,
        mode: LockMode,
        held: &mut Vec<(usize, LockMode)>,
    ) -> Result<(), Deadlock> {
        let grant = self.locks.acquire(ts, lock_name(i), mode)?;
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
        Ok(())
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

    /// Runs `plan` until it commits (a victim rolls back and retries as its
    /// next attempt); adds its increments per name to `tally`; returns how
    /// many of its attempts were victims.
    fn run(&self, plan: &Plan, tally: &mut [u64]) -> u32 {
        let mut ts = self.locks.begin();
        let mut held = Vec::new();
        let mut victims = 0;
        'attempt: loop {
            for &(i, mode, upgrade) in plan {
                let taken = self.take(ts, i, mode, &mut held).and_then(|()| {
                    if upgrade {
                        self.take(ts, i, LockMode::Exclusive, &mut held)
                    } else {
                        Ok(())
                    }
                });
                if taken.is_err() {
                    victims += 1;
                    self.victims.fetch_add(1, Ordering::Relaxed);
                    self.release_all(ts, &mut held);
                    ts = ts.retry();
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
            return victims;
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
        assert_eq!(self.locks.waiting_requests(), 0, "seed {seed}: graph nodes");
        // Every attempt committed or was a victim, and the manager counted
        // exactly the victims the transactions saw.
        let stats = self.locks.stats();
        assert_eq!(
            stats.deadlock_victims,
            self.victims.load(Ordering::Relaxed),
            "seed {seed}"
        );
        eprintln!(
            "seed {seed}: {} commits, {} victims, {stats:?}",
            self.commits.load(Ordering::Relaxed),
            self.victims.load(Ordering::Relaxed)
        );
    }
}

/// Waits until `commits` reaches `total`, aborting the process (with the
/// seed) if it stops moving for [`stall_limit`]: a deadlock.
fn watch(shared: &Shared, total: u64, seed: u64) {
    let (mut last, mut since) = (0, Instant::now());
    let limit = stall_limit();
    loop {
        let now = shared.commits.load(Ordering::Relaxed);
        if now == total {
            return;
        }
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > limit {
            // Straight to stderr: the test harness captures `eprintln!`, and
            // an abort would swallow the captured seed.
            let _ = writeln!(
                std::io::stderr(),
                "seed {seed}: no commit for {limit:?} at {now}/{total}: deadlock\n{}",
                shared.locks.debug_dump()
            );
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
    // Contention is near certain (holders yield while holding), but how much
    // depends on the OS scheduler, so `check` prints it rather than asserts.
    shared.check(seed, &tallies);
    assert_eq!(shared.commits.load(Ordering::Relaxed), threads * per_thread);
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
