//! Whole-crate tests of `maestro_scheduler::sync`: `Mutex`, `RwLock`, `Condvar`,
//! `Semaphore`, `Barrier`, `Event`, `Latch` and `blocking`.
//!
//! Every primitive is checked for correctness under contention twice: from plain
//! std threads (client threads, where the primitives behave as ordinary ones) and
//! from tasks running on a `Scheduler`. Then the timeouts (`Mutex::lock_until`,
//! `Condvar::wait_timeout`, `Semaphore::acquire_timeout`, `Barrier::wait_timeout`,
//! `Event::wait_timeout`) and the scheduler accounting: waiting tasks show up as
//! *blocked* workers and `blocked_events`, `blocking` regions as *inactive-by-user*,
//! and under `single-pool-nosys` blocked workers still count as active. Tests that
//! need workers added for blocked ones run under `single-pool` and under
//! `single-pool-paper` (watchdog only).
//!
//! Only deterministic facts are asserted: counts reached after polling with a
//! generous deadline, never how fast something happened. Each test body runs under
//! [`within`], so a deadlock or lost wake-up fails the test instead of hanging it.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use maestro_scheduler::sync::{
    Barrier, Condvar, Event, Latch, Mutex, RwLock, Semaphore, blocking, current_worker_state,
};
use maestro_scheduler::{Scheduler, SchedulerStats, WorkerState};

/// Limit for a whole test body: far above any plausible run time (even on a loaded
/// 2-core machine), so that reaching it means a deadlock or a lost wake-up.
const TEST_LIMIT: Duration = Duration::from_secs(120);
/// Limit for one polled condition inside a test.
const POLL_LIMIT: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread and fails if it does not finish within `TEST_LIMIT`;
/// a panic of `f` is re-raised here with its original payload.
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = channel();
    std::thread::Builder::new()
        .name(what.to_string())
        .spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        })
        .expect("spawn test thread");
    match rx.recv_timeout(TEST_LIMIT) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => resume_unwind(p),
        Err(RecvTimeoutError::Timeout) => {
            panic!("{what}: not finished after {TEST_LIMIT:?} (deadlock or lost wake-up?)")
        }
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: test thread vanished"),
    }
}

/// Polls `cond` until it holds; panics with `what` and `detail()` after `POLL_LIMIT`.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool, detail: impl Fn() -> String) {
    let deadline = Instant::now() + POLL_LIMIT;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {}",
            detail()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The presets where blocked workers leave the active level: `single-pool` wakes a
/// parked worker as one blocks (and the watchdog adds more), `single-pool-paper`
/// leaves it all to the watchdog.
const WATCHDOG_PRESETS: [&str; 2] = ["single-pool", "single-pool-paper"];

fn sched(preset: &str, contexts: usize) -> Arc<Scheduler> {
    Arc::new(Scheduler::with_preset(preset, contexts).expect("scheduler starts"))
}

/// Runs `n` closures as std threads and joins them (re-raising a panic).
fn on_threads(n: usize, f: impl Fn(usize) + Send + Sync + 'static) {
    let f = Arc::new(f);
    let threads: Vec<_> = (0..n)
        .map(|i| {
            let f = f.clone();
            std::thread::spawn(move || f(i))
        })
        .collect();
    for t in threads {
        if let Err(p) = t.join() {
            resume_unwind(p);
        }
    }
}

/// Runs `n` closures as spawned tasks of `s` and waits for all (re-raising a panic).
fn on_tasks(s: &Scheduler, n: usize, f: impl Fn(usize) + Send + Sync + 'static) {
    let f = Arc::new(f);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let f = f.clone();
            s.spawn(move || f(i))
        })
        .collect();
    for h in handles {
        if let Err(p) = h.join() {
            p.resume();
        }
    }
}

/// Asserts the relation between `workers_active` and the per-state counts that the
/// preset defines (`WorkerCounts::active_level`), on one consistent snapshot.
fn assert_active_semantics(st: &SchedulerStats, count_sys_inactive: bool) {
    let expected = if count_sys_inactive {
        st.workers_total
            - st.workers_blocked
            - st.workers_inactive_by_user
            - st.workers_waiting_for_graph
            - st.workers_parked_now
    } else {
        st.workers_total - st.workers_waiting_for_graph - st.workers_parked_now
    };
    assert_eq!(
        st.workers_active, expected,
        "active-level semantics: {st:?}"
    );
}

// ---- Mutex ------------------------------------------------------------------------

/// Two fields that must always be equal outside a critical section, plus a flag
/// proving that no two holders overlap.
#[derive(Default)]
struct Pair {
    a: u64,
    b: u64,
}

fn bump_pair(p: &mut Pair, inside: &AtomicUsize) {
    assert_eq!(
        inside.fetch_add(1, Ordering::SeqCst),
        0,
        "two holders at once"
    );
    assert_eq!(p.a, p.b, "torn state seen by a holder");
    p.a += 1;
    std::hint::black_box(&mut *p);
    p.b += 1;
    inside.fetch_sub(1, Ordering::SeqCst);
}

#[test]
fn mutex_counts_exactly_from_client_threads() {
    within("mutex_counts_exactly_from_client_threads", || {
        const THREADS: usize = 4;
        const PER: usize = 20_000;
        let m = Arc::new(Mutex::new(Pair::default()));
        let inside = Arc::new(AtomicUsize::new(0));
        let (m2, inside2) = (m.clone(), inside.clone());
        on_threads(THREADS, move |t| {
            for i in 0..PER {
                bump_pair(&mut m2.lock(), &inside2);
                if (i + t) % 512 == 0 {
                    // Hold the lock across a yield now and then so waiters park.
                    let g = m2.lock();
                    std::thread::yield_now();
                    drop(g);
                }
            }
        });
        let p = m.lock();
        assert_eq!((p.a, p.b), ((THREADS * PER) as u64, (THREADS * PER) as u64));
        drop(p);
        assert!(!m.is_locked());
    });
}

#[test]
fn mutex_counts_exactly_from_tasks() {
    within("mutex_counts_exactly_from_tasks", || {
        const TASKS: usize = 64;
        const PER: usize = 1_000;
        let s = sched("single-pool", 2);
        let m = Mutex::new(Pair::default());
        let inside = AtomicUsize::new(0);
        s.scope(|sc| {
            for t in 0..TASKS {
                let (m, inside) = (&m, &inside);
                sc.spawn(move |_| {
                    for i in 0..PER {
                        let mut g = m.lock();
                        bump_pair(&mut g, inside);
                        if (i + t) % 128 == 0 {
                            std::thread::yield_now();
                        }
                    }
                });
            }
        });
        let p = m.into_inner();
        assert_eq!((p.a, p.b), ((TASKS * PER) as u64, (TASKS * PER) as u64));
    });
}

#[test]
fn mutex_try_lock_and_debug() {
    let m = Mutex::new(5u32);
    {
        let g = m.lock();
        assert!(m.is_locked());
        assert!(m.try_lock().is_none());
        assert_eq!(format!("{m:?}"), "Mutex { <locked> }");
        drop(g);
    }
    assert!(!m.is_locked());
    *m.try_lock().expect("free lock") += 1;
    assert_eq!(format!("{m:?}"), "Mutex { data: 6 }");
    let mut m = m;
    *m.get_mut() += 1;
    assert_eq!(m.into_inner(), 7);
}

#[test]
fn mutex_lock_until_times_out_and_succeeds() {
    within("mutex_lock_until_times_out_and_succeeds", || {
        let m = Arc::new(Mutex::new(0u32));
        let held = Arc::new(AtomicBool::new(false));
        let release = Arc::new(AtomicBool::new(false));
        let holder = {
            let (m, held, release) = (m.clone(), held.clone(), release.clone());
            std::thread::spawn(move || {
                let mut g = m.lock();
                held.store(true, Ordering::SeqCst);
                while !release.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                *g += 1;
            })
        };
        wait_for("holder", || held.load(Ordering::SeqCst), String::new);
        // Held elsewhere: the timed lock gives up, and only once its deadline passed.
        let deadline = Instant::now() + Duration::from_millis(50);
        assert!(m.lock_until(deadline).is_none());
        assert!(Instant::now() >= deadline, "lock_until returned None early");
        // Released while we wait: the timed lock succeeds well before its deadline.
        let m2 = m.clone();
        let waiter = std::thread::spawn(move || {
            let g = m2.lock_until(Instant::now() + Duration::from_secs(60));
            g.map(|g| *g)
        });
        std::thread::sleep(Duration::from_millis(20));
        release.store(true, Ordering::SeqCst);
        holder.join().unwrap();
        assert_eq!(
            waiter.join().unwrap(),
            Some(1),
            "lock_until got the lock after release"
        );
        // Free lock: immediate success even with a deadline in the past.
        assert!(m.lock_until(Instant::now()).is_some());
    });
}

#[test]
fn mutex_lock_until_times_out_on_a_worker() {
    within("mutex_lock_until_times_out_on_a_worker", || {
        let s = sched("single-pool", 2);
        let m = Arc::new(Mutex::new(()));
        let g = m.lock();
        let m2 = m.clone();
        let h = s.spawn(move || {
            let deadline = Instant::now() + Duration::from_millis(50);
            let got = m2.lock_until(deadline).is_some();
            (got, Instant::now() >= deadline)
        });
        let (got, after_deadline) = h.join().unwrap();
        assert!(!got, "the lock is held by the client thread");
        assert!(
            after_deadline,
            "lock_until returned None before its deadline"
        );
        drop(g);
        // The timed-out waiter left no state behind: the lock works normally.
        let m3 = m.clone();
        let h = s.spawn(move || {
            m3.lock_until(Instant::now() + Duration::from_secs(60))
                .is_some()
        });
        assert!(h.join().unwrap());
        assert_eq!(s.worker_counts().blocked(), 0);
    });
}

#[test]
fn contended_mutex_on_tasks_counts_blocked_workers() {
    within("contended_mutex_on_tasks_counts_blocked_workers", || {
        for preset in WATCHDOG_PRESETS {
            let s = sched(preset, 2);
            let m = Arc::new(Mutex::new(0u64));
            // The client holds the lock, so the tasks must sleep in the mutex.
            let g = m.lock();
            let before = s.stats().blocked_events;
            let m2 = m.clone();
            let s2 = s.clone();
            let waiter = std::thread::spawn(move || {
                on_tasks(&s2, 2, move |_| *m2.lock() += 1);
            });
            wait_for(
                "two blocked workers",
                || s.worker_counts().blocked() == 2,
                || format!("{:?}", s.worker_counts()),
            );
            let st = s.stats();
            assert!(st.blocked_events >= before + 2, "{preset}: {st:?}");
            assert_eq!(st.workers_blocked, 2);
            // Both presets: blocked workers leave the active level.
            assert_active_semantics(&st, true);
            assert!(st.workers_active <= st.workers_total - 2, "{st:?}");
            drop(g);
            waiter.join().unwrap();
            assert_eq!(*m.lock(), 2);
            // Each task left the blocked state before it finished.
            assert_eq!(s.worker_counts().blocked(), 0);
        }
    });
}

#[test]
fn nosys_blocked_workers_still_count_as_active() {
    within("nosys_blocked_workers_still_count_as_active", || {
        let s = sched("single-pool-nosys", 2);
        assert!(!s.config().count_sys_inactive);
        let m = Arc::new(Mutex::new(0u64));
        let g = m.lock();
        let m2 = m.clone();
        let s2 = s.clone();
        let waiter = std::thread::spawn(move || {
            on_tasks(&s2, 2, move |_| *m2.lock() += 1);
        });
        wait_for(
            "two blocked workers",
            || s.worker_counts().blocked() == 2,
            || format!("{:?}", s.worker_counts()),
        );
        let st = s.stats();
        assert!(st.blocked_events >= 2, "{st:?}");
        assert_active_semantics(&st, false);
        // Both blocked workers are part of the active level under NoSys ...
        assert!(st.workers_active >= 2, "{st:?}");
        // ... while the strict count (what single-pool reports) excludes them.
        let c = s.worker_counts();
        assert_eq!(c.blocked(), 2);
        assert_eq!(
            c.active_level(false),
            c.active_level(true) + c.blocked() + c.inactive_by_user()
        );
        drop(g);
        waiter.join().unwrap();
        assert_eq!(*m.lock(), 2);
        assert_eq!(s.worker_counts().blocked(), 0);
    });
}

// ---- RwLock -------------------------------------------------------------------------

const WIDTH: usize = 16;

/// Writes `v` to every element, yielding in the middle now and then so that a
/// reader slipping in would see a torn mix of old and new values.
fn write_all(data: &mut [u64; WIDTH]) -> u64 {
    let v = data[0] + 1;
    for (i, x) in data.iter_mut().enumerate() {
        *x = v;
        if i == WIDTH / 2 && v.is_multiple_of(64) {
            std::thread::yield_now();
        }
    }
    v
}

/// Checks a read snapshot; returns its value.
fn check_read(data: &[u64; WIDTH], last: u64) -> u64 {
    let v = data[0];
    assert!(data.iter().all(|&x| x == v), "torn read: {data:?}");
    assert!(v >= last, "value went backwards: {last} -> {v}");
    v
}

#[test]
fn rwlock_readers_never_see_torn_writes_from_client_threads() {
    within(
        "rwlock_readers_never_see_torn_writes_from_client_threads",
        || {
            const WRITERS: usize = 2;
            const WRITES: usize = 5_000;
            let l = Arc::new(RwLock::new([0u64; WIDTH]));
            let writers_done = Arc::new(AtomicUsize::new(0));
            let reads = Arc::new(AtomicU64::new(0));
            let (l2, done2, reads2) = (l.clone(), writers_done.clone(), reads.clone());
            on_threads(WRITERS + 3, move |t| {
                if t < WRITERS {
                    for _ in 0..WRITES {
                        write_all(&mut l2.write());
                    }
                    done2.fetch_add(1, Ordering::SeqCst);
                } else {
                    let mut last = 0;
                    loop {
                        let finished = done2.load(Ordering::SeqCst) == WRITERS;
                        last = check_read(&l2.read(), last);
                        reads2.fetch_add(1, Ordering::Relaxed);
                        if finished {
                            break;
                        }
                    }
                }
            });
            assert_eq!(l.read()[0], (WRITERS * WRITES) as u64);
            assert!(reads.load(Ordering::Relaxed) >= 3);
        },
    );
}

#[test]
fn rwlock_readers_never_see_torn_writes_from_tasks() {
    within("rwlock_readers_never_see_torn_writes_from_tasks", || {
        const TASKS: usize = 32;
        const OPS: usize = 500;
        let s = sched("single-pool", 2);
        let l = RwLock::new([0u64; WIDTH]);
        let writes = AtomicUsize::new(0);
        s.scope(|sc| {
            for t in 0..TASKS {
                let (l, writes) = (&l, &writes);
                sc.spawn(move |_| {
                    let mut last = 0;
                    for i in 0..OPS {
                        if (i + t) % 4 == 0 {
                            last = write_all(&mut l.write());
                            writes.fetch_add(1, Ordering::Relaxed);
                        } else {
                            last = check_read(&l.read(), last);
                        }
                    }
                });
            }
        });
        assert_eq!(l.into_inner()[0], writes.load(Ordering::Relaxed) as u64);
    });
}

#[test]
fn rwlock_shares_readers_and_excludes_writers() {
    let l = RwLock::new(1u32);
    let r1 = l.read();
    let r2 = l
        .try_read()
        .expect("a second reader enters beside the first");
    assert!(
        l.try_write().is_none(),
        "no writer while readers hold the lock"
    );
    assert_eq!(*r1 + *r2, 2);
    drop((r1, r2));
    let mut w = l.try_write().expect("free for a writer");
    assert!(
        l.try_read().is_none(),
        "no reader while a writer holds the lock"
    );
    assert!(l.try_write().is_none());
    *w = 2;
    drop(w);
    let mut l = l;
    *l.get_mut() += 1;
    assert_eq!(l.into_inner(), 3);
}

#[test]
fn rwlock_waiters_on_tasks_are_woken_by_the_release() {
    within("rwlock_waiters_on_tasks_are_woken_by_the_release", || {
        let s = sched("single-pool", 2);
        let l = Arc::new(RwLock::new(0u64));
        // Readers wait for a client-held write lock.
        let w = l.write();
        let l2 = l.clone();
        let s2 = s.clone();
        let readers =
            std::thread::spawn(move || on_tasks(&s2, 2, move |_| assert_eq!(*l2.read(), 7)));
        wait_for(
            "a blocked reader",
            || s.worker_counts().blocked() >= 1,
            || format!("{:?}", s.worker_counts()),
        );
        let mut w = w;
        *w = 7;
        drop(w);
        readers.join().unwrap();
        // A writer waits for a client-held read lock.
        let r = l.read();
        let l3 = l.clone();
        let s3 = s.clone();
        let writer = std::thread::spawn(move || on_tasks(&s3, 1, move |_| *l3.write() += 1));
        wait_for(
            "a blocked writer",
            || s.worker_counts().blocked() == 1,
            || format!("{:?}", s.worker_counts()),
        );
        drop(r);
        writer.join().unwrap();
        assert_eq!(*l.read(), 8);
        assert!(s.stats().blocked_events >= 2);
    });
}

// ---- Condvar ------------------------------------------------------------------------

/// A bounded queue on a `Mutex` and two `Condvar`s; every item must be consumed
/// exactly once.
struct ProdCons {
    state: Mutex<PcState>,
    not_empty: Condvar,
    not_full: Condvar,
    seen: Vec<AtomicUsize>,
    producers: usize,
    per_producer: usize,
}

struct PcState {
    queue: VecDeque<usize>,
    producers_done: usize,
}

const PC_CAPACITY: usize = 4;

impl ProdCons {
    fn new(producers: usize, per_producer: usize) -> Arc<Self> {
        Arc::new(ProdCons {
            state: Mutex::new(PcState {
                queue: VecDeque::new(),
                producers_done: 0,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            seen: (0..producers * per_producer)
                .map(|_| AtomicUsize::new(0))
                .collect(),
            producers,
            per_producer,
        })
    }

    fn produce(&self, p: usize) {
        for i in 0..self.per_producer {
            let mut s = self.state.lock();
            self.not_full
                .wait_while(&mut s, |s| s.queue.len() >= PC_CAPACITY);
            s.queue.push_back(p * self.per_producer + i);
            drop(s);
            self.not_empty.notify_one();
        }
        self.state.lock().producers_done += 1;
        self.not_empty.notify_all();
    }

    fn consume(&self) -> usize {
        let mut n = 0;
        loop {
            let mut s = self.state.lock();
            while s.queue.is_empty() && s.producers_done < self.producers {
                self.not_empty.wait(&mut s);
            }
            let Some(item) = s.queue.pop_front() else {
                return n;
            };
            drop(s);
            self.not_full.notify_one();
            self.seen[item].fetch_add(1, Ordering::SeqCst);
            n += 1;
        }
    }

    fn check(&self, consumed: usize) {
        assert_eq!(consumed, self.seen.len(), "items consumed");
        for (i, c) in self.seen.iter().enumerate() {
            assert_eq!(
                c.load(Ordering::SeqCst),
                1,
                "item {i} consumed a wrong number of times"
            );
        }
    }
}

#[test]
fn condvar_producer_consumer_from_client_threads() {
    within("condvar_producer_consumer_from_client_threads", || {
        let pc = ProdCons::new(2, 5_000);
        let consumed = Arc::new(AtomicUsize::new(0));
        let (pc2, consumed2) = (pc.clone(), consumed.clone());
        on_threads(4, move |t| {
            if t < 2 {
                pc2.produce(t);
            } else {
                consumed2.fetch_add(pc2.consume(), Ordering::SeqCst);
            }
        });
        pc.check(consumed.load(Ordering::SeqCst));
    });
}

#[test]
fn condvar_producer_consumer_from_tasks() {
    within("condvar_producer_consumer_from_tasks", || {
        // More waiting tasks than contexts: workers are added for the blocked ones (at
        // once or by the watchdog under single-pool, by the watchdog only under
        // single-pool-paper).
        for preset in WATCHDOG_PRESETS {
            let s = sched(preset, 2);
            let pc = ProdCons::new(3, 2_000);
            let consumed = Arc::new(AtomicUsize::new(0));
            let (pc2, consumed2) = (pc.clone(), consumed.clone());
            // Consumers first, so that they are the ones that block.
            on_tasks(&s, 6, move |t| {
                if t >= 3 {
                    pc2.produce(t - 3);
                } else {
                    consumed2.fetch_add(pc2.consume(), Ordering::SeqCst);
                }
            });
            pc.check(consumed.load(Ordering::SeqCst));
        }
    });
}

#[test]
fn condvar_wait_timeout_times_out_without_notify() {
    within("condvar_wait_timeout_times_out_without_notify", || {
        let m = Mutex::new(());
        let cv = Condvar::new();
        let mut g = m.lock();
        let timeout = Duration::from_millis(50);
        let start = Instant::now();
        // A condvar may wake spuriously; it must report the timeout eventually.
        let mut timed_out = false;
        for _ in 0..1_000 {
            let left = timeout.saturating_sub(start.elapsed());
            if cv.wait_timeout(&mut g, left).timed_out() {
                timed_out = true;
                break;
            }
        }
        assert!(timed_out, "wait_timeout never reported a timeout");
        assert!(start.elapsed() >= timeout, "timed out before the timeout");
        // The guard is usable again: the mutex is held by us.
        assert!(m.try_lock().is_none());
        drop(g);
        // wait_until with a deadline in the past times out at once.
        let mut g = m.lock();
        assert!(cv.wait_until(&mut g, Instant::now()).timed_out());
    });
}

#[test]
fn condvar_wait_timeout_returns_on_notify() {
    within("condvar_wait_timeout_returns_on_notify", || {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let pair2 = pair.clone();
        let waiter = std::thread::spawn(move || {
            let (m, cv) = &*pair2;
            let mut g = m.lock();
            while !*g {
                let r = cv.wait_timeout(&mut g, Duration::from_secs(60));
                assert!(!r.timed_out(), "notify was lost");
            }
        });
        std::thread::sleep(Duration::from_millis(10));
        *pair.0.lock() = true;
        pair.1.notify_one();
        waiter.join().unwrap();
    });
}

#[test]
fn condvar_notify_all_wakes_every_waiter_on_tasks_and_threads() {
    within(
        "condvar_notify_all_wakes_every_waiter_on_tasks_and_threads",
        || {
            let s = sched("single-pool", 2);
            let pair = Arc::new((Mutex::new(false), Condvar::new()));
            let woken = Arc::new(AtomicUsize::new(0));
            let wait = {
                let (pair, woken) = (pair.clone(), woken.clone());
                move |_: usize| {
                    let (m, cv) = &*pair;
                    let mut g = m.lock();
                    cv.wait_while(&mut g, |go| !*go);
                    woken.fetch_add(1, Ordering::SeqCst);
                }
            };
            let s2 = s.clone();
            let w2 = wait.clone();
            let tasks = std::thread::spawn(move || on_tasks(&s2, 3, w2));
            let threads = std::thread::spawn(move || on_threads(3, wait));
            wait_for(
                "a blocked task",
                || s.worker_counts().blocked() >= 1,
                || format!("{:?}", s.worker_counts()),
            );
            *pair.0.lock() = true;
            pair.1.notify_all();
            tasks.join().unwrap();
            threads.join().unwrap();
            assert_eq!(woken.load(Ordering::SeqCst), 6);
        },
    );
}

// ---- Semaphore ----------------------------------------------------------------------

/// Holds a permit, tracking how many holders are inside at once.
fn inside_permit(sem: &Semaphore, now: &AtomicUsize, max: &AtomicUsize, rounds: usize) {
    for i in 0..rounds {
        let _p = sem.access();
        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
        max.fetch_max(n, Ordering::SeqCst);
        if i % 4 == 0 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
        now.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn semaphore_never_exceeds_its_permits_from_client_threads() {
    within(
        "semaphore_never_exceeds_its_permits_from_client_threads",
        || {
            let sem = Arc::new(Semaphore::new(3));
            let now = Arc::new(AtomicUsize::new(0));
            let max = Arc::new(AtomicUsize::new(0));
            let (sem2, now2, max2) = (sem.clone(), now.clone(), max.clone());
            on_threads(8, move |_| inside_permit(&sem2, &now2, &max2, 2_000));
            let max = max.load(Ordering::SeqCst);
            assert!((1..=3).contains(&max), "max holders {max}");
            assert_eq!(sem.available(), 3, "every permit came back");
        },
    );
}

#[test]
fn semaphore_never_exceeds_its_permits_from_tasks() {
    within("semaphore_never_exceeds_its_permits_from_tasks", || {
        let s = sched("single-pool", 2);
        let sem = Arc::new(Semaphore::new(3));
        let now = Arc::new(AtomicUsize::new(0));
        let max = Arc::new(AtomicUsize::new(0));
        let (sem2, now2, max2) = (sem.clone(), now.clone(), max.clone());
        on_tasks(&s, 16, move |_| inside_permit(&sem2, &now2, &max2, 300));
        let max = max.load(Ordering::SeqCst);
        assert!((1..=3).contains(&max), "max holders {max}");
        assert_eq!(sem.available(), 3);
    });
}

#[test]
fn semaphore_try_acquire_timeout_and_release_n() {
    within("semaphore_try_acquire_timeout_and_release_n", || {
        let sem = Arc::new(Semaphore::new(1));
        assert!(sem.try_acquire());
        assert!(!sem.try_acquire(), "no permit left");
        let timeout = Duration::from_millis(50);
        let start = Instant::now();
        assert!(!sem.acquire_timeout(timeout));
        assert!(start.elapsed() >= timeout, "acquire_timeout gave up early");
        assert_eq!(sem.available(), 0, "a timed-out acquire takes nothing");
        // Two waiters, released together by release_n(2).
        let got = Arc::new(AtomicUsize::new(0));
        let (sem2, got2) = (sem.clone(), got.clone());
        let waiters = std::thread::spawn(move || {
            on_threads(2, move |_| {
                assert!(
                    sem2.acquire_timeout(Duration::from_secs(60)),
                    "release_n lost a wake-up"
                );
                got2.fetch_add(1, Ordering::SeqCst);
            })
        });
        std::thread::sleep(Duration::from_millis(10));
        sem.release_n(2);
        waiters.join().unwrap();
        assert_eq!(got.load(Ordering::SeqCst), 2);
        assert_eq!(sem.available(), 0);
        sem.release();
        assert_eq!(sem.available(), 1);
        assert!(
            sem.acquire_timeout(Duration::ZERO),
            "a free permit is taken at once"
        );
    });
}

#[test]
fn semaphore_acquire_timeout_on_a_worker() {
    within("semaphore_acquire_timeout_on_a_worker", || {
        let s = sched("single-pool", 2);
        let sem = Arc::new(Semaphore::new(0));
        let sem2 = sem.clone();
        let timed_out = s.spawn(move || !sem2.acquire_timeout(Duration::from_millis(30)));
        assert!(timed_out.join().unwrap());
        let sem3 = sem.clone();
        let h = s.spawn(move || sem3.acquire_timeout(Duration::from_secs(60)));
        wait_for(
            "a blocked acquirer",
            || s.worker_counts().blocked() == 1,
            || format!("{:?}", s.worker_counts()),
        );
        sem.release();
        assert!(h.join().unwrap());
        assert_eq!(sem.available(), 0);
    });
}

// ---- Barrier ------------------------------------------------------------------------

/// `n` parties pass `generations` generations of `barrier`; per generation everyone
/// must have arrived before anyone leaves, and exactly one is the leader.
struct BarrierRun {
    barrier: Barrier,
    arrived: Vec<AtomicUsize>,
    leaders: Vec<AtomicUsize>,
    n: usize,
}

impl BarrierRun {
    fn new(n: usize, generations: usize) -> Arc<Self> {
        Arc::new(BarrierRun {
            barrier: Barrier::new(n),
            arrived: (0..generations).map(|_| AtomicUsize::new(0)).collect(),
            leaders: (0..generations).map(|_| AtomicUsize::new(0)).collect(),
            n,
        })
    }

    fn party(&self) {
        for g in 0..self.arrived.len() {
            self.arrived[g].fetch_add(1, Ordering::SeqCst);
            if self.barrier.wait().is_leader() {
                self.leaders[g].fetch_add(1, Ordering::SeqCst);
            }
            assert_eq!(
                self.arrived[g].load(Ordering::SeqCst),
                self.n,
                "left generation {g} before everyone arrived"
            );
        }
    }

    fn check(&self) {
        for (g, l) in self.leaders.iter().enumerate() {
            assert_eq!(l.load(Ordering::SeqCst), 1, "leaders of generation {g}");
        }
    }
}

#[test]
fn barrier_generations_are_reusable_from_client_threads() {
    within(
        "barrier_generations_are_reusable_from_client_threads",
        || {
            let run = BarrierRun::new(4, 500);
            let run2 = run.clone();
            on_threads(4, move |_| run2.party());
            run.check();
        },
    );
}

#[test]
fn barrier_generations_are_reusable_from_tasks() {
    within("barrier_generations_are_reusable_from_tasks", || {
        // Four parties on two contexts: the watchdog must add workers for the blocked.
        for preset in WATCHDOG_PRESETS {
            let s = sched(preset, 2);
            let run = BarrierRun::new(4, 100);
            let run2 = run.clone();
            on_tasks(&s, 4, move |_| run2.party());
            run.check();
            let st = s.stats();
            assert!(
                st.workers_peak >= 4,
                "{preset}: four parties need four workers at once: {st:?}"
            );
        }
    });
}

#[test]
fn barrier_wait_timeout_withdraws_the_arrival() {
    within("barrier_wait_timeout_withdraws_the_arrival", || {
        let b = Arc::new(Barrier::new(2));
        let timeout = Duration::from_millis(30);
        let start = Instant::now();
        assert_eq!(b.wait_timeout(timeout), None, "a lone party cannot pass");
        assert!(start.elapsed() >= timeout, "gave up early");
        // Had the first arrival not been withdrawn, this one would complete the pair.
        assert_eq!(
            b.wait_timeout(timeout),
            None,
            "timed-out arrival was not withdrawn"
        );
        // A real pair passes, with exactly one leader.
        let b2 = b.clone();
        let other = std::thread::spawn(move || b2.wait_timeout(Duration::from_secs(60)));
        let mine = b
            .wait_timeout(Duration::from_secs(60))
            .expect("pair passes");
        let theirs = other.join().unwrap().expect("pair passes");
        assert!(mine.is_leader() ^ theirs.is_leader(), "exactly one leader");
        // Still reusable after that.
        let b3 = b.clone();
        let other = std::thread::spawn(move || b3.wait());
        let mine = b.wait();
        assert!(mine.is_leader() ^ other.join().unwrap().is_leader());
    });
}

// ---- Event --------------------------------------------------------------------------

#[test]
fn event_set_reset_and_wait_timeout() {
    within("event_set_reset_and_wait_timeout", || {
        let e = Event::new();
        assert!(!e.is_set());
        let timeout = Duration::from_millis(30);
        let start = Instant::now();
        assert!(!e.wait_timeout(timeout));
        assert!(start.elapsed() >= timeout, "gave up early");
        e.set();
        assert!(e.is_set());
        e.wait();
        assert!(e.wait_timeout(Duration::ZERO), "a set event passes at once");
        e.set();
        assert!(e.is_set(), "set is idempotent");
        e.reset();
        assert!(!e.is_set());
        assert!(
            !e.wait_timeout(Duration::from_millis(10)),
            "reset closes the event again"
        );
        assert!(!Event::default().is_set());
    });
}

#[test]
fn event_set_releases_every_waiter() {
    within("event_set_releases_every_waiter", || {
        let s = sched("single-pool", 2);
        let e = Arc::new(Event::new());
        let passed = Arc::new(AtomicUsize::new(0));
        let wait = {
            let (e, passed) = (e.clone(), passed.clone());
            move |i: usize| {
                if i.is_multiple_of(2) {
                    e.wait();
                } else {
                    assert!(e.wait_timeout(Duration::from_secs(60)), "set was lost");
                }
                passed.fetch_add(1, Ordering::SeqCst);
            }
        };
        let s2 = s.clone();
        let w2 = wait.clone();
        let tasks = std::thread::spawn(move || on_tasks(&s2, 2, w2));
        let threads = std::thread::spawn(move || on_threads(4, wait));
        wait_for(
            "two tasks blocked on the event",
            || s.worker_counts().blocked() == 2,
            || format!("{:?}", s.worker_counts()),
        );
        assert_eq!(passed.load(Ordering::SeqCst), 0);
        e.set();
        tasks.join().unwrap();
        threads.join().unwrap();
        assert_eq!(passed.load(Ordering::SeqCst), 6);
        assert_eq!(s.worker_counts().blocked(), 0);
    });
}

// ---- Latch --------------------------------------------------------------------------

#[test]
fn latch_mutual_exclusion_from_client_threads() {
    within("latch_mutual_exclusion_from_client_threads", || {
        const THREADS: usize = 4;
        const PER: usize = 20_000;
        let l = Arc::new(Latch::new(Pair::default()));
        let inside = Arc::new(AtomicUsize::new(0));
        let (l2, inside2) = (l.clone(), inside.clone());
        on_threads(THREADS, move |t| {
            for i in 0..PER {
                let mut g = l2.lock();
                bump_pair(&mut g, &inside2);
                if (i + t) % 1024 == 0 {
                    // A long hold: client waiters exhaust their spin budget and park.
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        });
        let p = l.lock();
        assert_eq!((p.a, p.b), ((THREADS * PER) as u64, (THREADS * PER) as u64));
    });
}

#[test]
fn latch_mutual_exclusion_from_tasks() {
    within("latch_mutual_exclusion_from_tasks", || {
        const TASKS: usize = 16;
        const PER: usize = 2_000;
        let s = sched("single-pool", 2);
        let l = Latch::new(Pair::default());
        let inside = AtomicUsize::new(0);
        s.scope(|sc| {
            for t in 0..TASKS {
                let (l, inside) = (&l, &inside);
                sc.spawn(move |_| {
                    for i in 0..PER {
                        let mut g = l.lock();
                        bump_pair(&mut g, inside);
                        if (i + t) % 256 == 0 {
                            std::thread::yield_now();
                        }
                    }
                });
            }
        });
        let p = l.into_inner();
        assert_eq!((p.a, p.b), ((TASKS * PER) as u64, (TASKS * PER) as u64));
    });
}

#[test]
fn latch_waiter_on_a_worker_parks_as_blocked() {
    within("latch_waiter_on_a_worker_parks_as_blocked", || {
        let s = sched("single-pool", 2);
        let l = Arc::new(Latch::new(0u32));
        let g = l.lock();
        assert!(l.try_lock().is_none());
        let l2 = l.clone();
        let h = s.spawn(move || {
            *l2.lock() += 1;
        });
        // The worker spins for a bounded time, then sleeps as blocked.
        wait_for(
            "a blocked latch waiter",
            || s.worker_counts().blocked() == 1,
            || format!("{:?}", s.worker_counts()),
        );
        let st = s.stats();
        assert!(st.latch_parks >= 1, "{st:?}");
        assert!(st.blocked_events >= 1, "{st:?}");
        drop(g);
        h.join().unwrap();
        assert_eq!(*l.try_lock().expect("free"), 1);
        assert_eq!(s.worker_counts().blocked(), 0);
    });
}

// ---- blocking ---------------------------------------------------------------------

#[test]
fn blocking_on_a_client_thread_just_runs() {
    assert_eq!(current_worker_state(), None);
    assert_eq!(blocking(current_worker_state), None);
    assert_eq!(blocking(|| 42), 42);
}

#[test]
fn blocking_marks_the_worker_inactive_by_user() {
    within("blocking_marks_the_worker_inactive_by_user", || {
        let s = sched("single-pool", 2);
        let inside = Arc::new(AtomicBool::new(false));
        let leave = Arc::new(AtomicBool::new(false));
        let (inside2, leave2) = (inside.clone(), leave.clone());
        let h = s.spawn(move || {
            let before = current_worker_state();
            let (during, nested) = blocking(|| {
                inside2.store(true, Ordering::SeqCst);
                while !leave2.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                // A nested region keeps the outer state and does not undo it.
                let nested = blocking(current_worker_state);
                (current_worker_state(), nested)
            });
            (before, during, nested, current_worker_state())
        });
        wait_for(
            "the blocking region",
            || inside.load(Ordering::SeqCst),
            String::new,
        );
        let st = s.stats();
        assert_eq!(st.workers_inactive_by_user, 1, "{st:?}");
        assert!(st.inactive_by_user_events >= 1, "{st:?}");
        assert_active_semantics(&st, true);
        leave.store(true, Ordering::SeqCst);
        let (before, during, nested, after) = h.join().unwrap();
        assert_eq!(before, Some(WorkerState::Active));
        assert_eq!(during, Some(WorkerState::InactiveByUser));
        assert_eq!(nested, Some(WorkerState::InactiveByUser));
        assert_eq!(after, Some(WorkerState::Active));
        assert_eq!(s.worker_counts().inactive_by_user(), 0);
    });
}

/// With one context, a task inside `blocking` gives its context away: a task
/// submitted meanwhile runs at once on another worker (paper §5), so a rendezvous
/// between the two completes.
#[test]
fn blocking_region_releases_its_context_under_single_pool() {
    within(
        "blocking_region_releases_its_context_under_single_pool",
        || {
            let s = sched("single-pool", 1);
            let inside = Arc::new(AtomicBool::new(false));
            let other_ran = Arc::new(AtomicBool::new(false));
            let (inside2, ran2) = (inside.clone(), other_ran.clone());
            let a = s.spawn(move || {
                blocking(|| {
                    inside2.store(true, Ordering::SeqCst);
                    let deadline = Instant::now() + POLL_LIMIT;
                    while !ran2.load(Ordering::SeqCst) && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    ran2.load(Ordering::SeqCst)
                })
            });
            wait_for(
                "the blocking region",
                || inside.load(Ordering::SeqCst),
                String::new,
            );
            let ran3 = other_ran.clone();
            let b = s.spawn(move || ran3.store(true, Ordering::SeqCst));
            assert!(
                a.join().unwrap(),
                "the second task never ran beside the blocking one"
            );
            b.join().unwrap();
            let st = s.stats();
            assert!(st.workers_peak >= 2, "{st:?}");
        },
    );
}

/// Under Single-Pool-NoSys the same region keeps its context: with one context the
/// second task cannot start before the region ends (nothing in the NoSys policy
/// would start it), and runs right after.
#[test]
fn blocking_region_keeps_its_context_under_nosys() {
    within("blocking_region_keeps_its_context_under_nosys", || {
        let s = sched("single-pool-nosys", 1);
        // Submit only once the worker is parked: a submission racing a worker's
        // `park_idle` can read a parked count the worker then reverts, find the idle
        // list empty and let `Shared::activate(Submit)` create a thread, even under
        // NoSys; that would spoil the peak asserted below.
        wait_for(
            "the worker to park",
            || s.worker_counts().parked() == 1,
            || format!("{:?}", s.worker_counts()),
        );
        let inside = Arc::new(AtomicBool::new(false));
        let other_ran = Arc::new(AtomicBool::new(false));
        let (inside2, ran2) = (inside.clone(), other_ran.clone());
        let submitted = Arc::new(AtomicBool::new(false));
        let submitted2 = submitted.clone();
        let a = s.spawn(move || {
            blocking(|| {
                inside2.store(true, Ordering::SeqCst);
                while !submitted2.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(Duration::from_millis(100));
                ran2.load(Ordering::SeqCst)
            })
        });
        wait_for(
            "the blocking region",
            || inside.load(Ordering::SeqCst),
            String::new,
        );
        let ran3 = other_ran.clone();
        let b = s.spawn(move || ran3.store(true, Ordering::SeqCst));
        submitted.store(true, Ordering::SeqCst);
        let st = s.stats();
        assert_active_semantics(&st, false);
        assert!(
            !a.join().unwrap(),
            "nosys started a task beside a blocking region"
        );
        b.join().unwrap();
        assert!(other_ran.load(Ordering::SeqCst));
        assert_eq!(s.stats().workers_peak, 1);
    });
}

/// `load_allows_spinning`: yes on a client thread and on a worker while the active
/// level is within the contexts; no on a worker that returned from `blocking`
/// while the worker activated in its place still runs (active 2 > 1 context).
#[test]
fn load_allows_spinning_follows_the_active_level() {
    use maestro_scheduler::sync::{blocking, load_allows_spinning};
    assert!(load_allows_spinning(), "client thread");
    let s = sched("single-pool", 1);
    // Alone: once the worker parked, the caller runs the job on the free
    // context (a worker still searching would count for a moment beside it).
    let s2 = s.clone();
    wait_for(
        "the worker to park",
        move || s2.worker_counts().parked() == 1,
        String::new,
    );
    assert!(s.install(load_allows_spinning), "alone on one context");

    let go = Arc::new(AtomicUsize::new(0));
    let b_running = Arc::new(AtomicUsize::new(0));
    let a_inactive = Arc::new(AtomicUsize::new(0));
    let a_verdict = Arc::new(AtomicUsize::new(0)); // 1 = spin, 2 = park
    let (g, a, ai) = (go.clone(), a_verdict.clone(), a_inactive.clone());
    let task_a = s.spawn(move || {
        blocking(|| {
            ai.store(1, Ordering::Release);
            while g.load(Ordering::Acquire) == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        a.store(
            if load_allows_spinning() { 1 } else { 2 },
            Ordering::Release,
        );
    });
    // B only once A is inactive: on one context B must get the worker activated
    // in A's place, never A's own.
    let ai = a_inactive.clone();
    wait_for(
        "task A to become inactive by user",
        move || ai.load(Ordering::Acquire) == 1,
        String::new,
    );
    let (br, a) = (b_running.clone(), a_verdict.clone());
    let task_b = s.spawn(move || {
        br.store(1, Ordering::Release);
        while a.load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
    });
    let b = b_running.clone();
    wait_for(
        "task B to run while A is inactive by user",
        move || b.load(Ordering::Acquire) == 1,
        String::new,
    );
    go.store(1, Ordering::Release);
    within("both tasks", move || {
        task_a.join().unwrap();
        task_b.join().unwrap();
    });
    assert_eq!(
        a_verdict.load(Ordering::Acquire),
        2,
        "A saw 2 active on 1 context"
    );
}
