//! Stress test of the park/wake protocol (`Shared::park_idle`, `notify_work`,
//! `wake_one`) on the real scheduler, with no safety net: the watchdog period is an
//! hour, so it never rescues a lost wake-up, and workers park after 0 or 1 idle spin
//! rounds.
//!
//! Each round waits until every worker is parked (or, in some rounds, submits while
//! the workers of the previous round are still on their way to park), then submits
//! work along one of several paths and waits for it with a generous timeout. Most
//! rounds need *both* workers at once — two tasks meet at a rendezvous that only
//! completes if each runs on its own worker — so a lost wake-up of the second worker
//! is caught too, not only one of the first. The paths:
//!
//! - `Spawn`: `Scheduler::spawn` from the client (`push_root`).
//! - `PairGraph`: a submitted graph whose root makes two meeting successors ready;
//!   the second is dispatched to a pool from a worker (`push_pool` + `notify_work`).
//! - `WideGraph`: root → several nodes (two of them meet) → sink.
//! - `JoinInTask`: `join` inside a task; the second half goes to the worker's local
//!   deque (no `queued` increment: the fence pairing in `has_work`/`notify_work`).
//! - `ScopeInTask`: `Scheduler::scope` inside a task, spawning onto the local deque.
//! - `SpawnFromTask`: a task `spawn`s a task it meets (`push_root` from a worker).
//! - `JoinRelay`: like `Relay` for the deque path: a task forks a `join` just as
//!   the other worker finishes its task and heads for `park_idle`; the forked half
//!   is only in the local deque, so that worker must find it by `has_work`'s deque
//!   scan.
//! - `InstallJoin`: `Scheduler::join` from a client (`install` pushes a root job,
//!   whose `join` pushes to the local deque).
//! - `RacingSubmitters`: two client threads released together each submit one node;
//!   the two nodes meet.
//! - `Relay`: a chain of `spawn`s, each submitted as soon as the previous task
//!   raised a flag, while that task still spins a random tail: the push lands at a
//!   random point of its worker's way back to `park_idle`, including the window
//!   between its last failed search and its re-check of `has_work` (where a missing
//!   re-check or fence would lose the wake-up; one context makes it decisive).
//!
//! A timeout fails the test with the round, the path, the seed and the counts.
//! Replay with `MAESTRO_WAKEUP_SEED=<seed>`; `MAESTRO_WAKEUP_ROUNDS` sets the number
//! of rounds (default 10 000, about 2 s on an idle 2-core machine) and
//! `MAESTRO_WAKEUP_BUDGET_SECS` a wall-clock budget after which no new round starts
//! (default 15 s, so a loaded machine runs fewer rounds instead of a long test).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use maestro_scheduler::{Scheduler, SchedulerConfig, TaskGraph};

/// Time limit for anything that should take microseconds: reaching it means a
/// wake-up was lost (the watchdog, which could hide that, never ticks).
const LIMIT: Duration = Duration::from_secs(30);

const DEFAULT_ROUNDS: usize = 10_000;
/// Wall-clock budget: on a loaded machine the test stops early (after the round in
/// progress) rather than run long; it never fails for being slow.
const DEFAULT_BUDGET_SECS: u64 = 15;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    Spawn,
    PairGraph,
    WideGraph,
    JoinInTask,
    ScopeInTask,
    SpawnFromTask,
    InstallJoin,
    RacingSubmitters,
    Relay,
    JoinRelay,
}

const PATHS: [Path; 10] = [
    Path::Spawn,
    Path::PairGraph,
    Path::WideGraph,
    Path::JoinInTask,
    Path::ScopeInTask,
    Path::SpawnFromTask,
    Path::InstallJoin,
    Path::RacingSubmitters,
    Path::Relay,
    Path::JoinRelay,
];

/// Relative frequency of each path: the two race-sweeping paths, which catch a
/// missing re-check or deque scan, get more rounds.
fn weight(p: Path) -> usize {
    match p {
        Path::Relay => 2,
        Path::JoinRelay => 3,
        _ => 1,
    }
}

/// An index into `PATHS`, drawn by `weight`.
fn pick_path(rng: &mut fastrand::Rng) -> usize {
    let total: usize = PATHS.iter().map(|&p| weight(p)).sum();
    let mut x = rng.usize(..total);
    for (i, &p) in PATHS.iter().enumerate() {
        if x < weight(p) {
            return i;
        }
        x -= weight(p);
    }
    unreachable!("x < total")
}

/// Submissions per `Relay` round.
const RELAY_STEPS: usize = 16;

/// One step of a busy wait: spin briefly, then yield, so that under CPU pressure the
/// thread being waited for gets the core (on two cores the test's own threads
/// already compete).
fn pause(polls: &mut u32) {
    *polls = polls.wrapping_add(1);
    if *polls < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// A busy wait that must react within nanoseconds (the race-sweeping paths): spin,
/// yielding only every 1024th poll.
fn pause_hot(polls: &mut u32) {
    *polls = polls.wrapping_add(1);
    if polls.is_multiple_of(1024) {
        std::thread::yield_now();
    } else {
        std::hint::spin_loop();
    }
}

impl Path {
    fn needs_two_workers(self) -> bool {
        !matches!(self, Path::Spawn | Path::WideGraph | Path::Relay)
    }
}

/// A two-party rendezvous by spinning (never blocking, so the waiting worker stays
/// *active* and nothing but the park protocol can bring the second worker). A party
/// that waits past `LIMIT` records a failure and leaves, so the round still ends.
struct Meet {
    arrived: AtomicUsize,
    failed: AtomicBool,
}

impl Meet {
    fn new() -> Arc<Meet> {
        Arc::new(Meet {
            arrived: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
        })
    }

    fn meet(&self) {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + LIMIT;
        let mut polls = 0u32;
        while self.arrived.load(Ordering::SeqCst) < 2 {
            if Instant::now() >= deadline {
                self.failed.store(true, Ordering::SeqCst);
                return;
            }
            pause(&mut polls);
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.failed.load(Ordering::SeqCst) {
            return Err(
                "one party of a rendezvous waited in vain: the second worker was never woken"
                    .into(),
            );
        }
        match self.arrived.load(Ordering::SeqCst) {
            2 => Ok(()),
            n => Err(format!("rendezvous saw {n} parties")),
        }
    }
}

fn config(seed: u64, contexts: usize, spin_rounds: u32) -> SchedulerConfig {
    let mut c = SchedulerConfig::single_pool().with_contexts(contexts);
    c.name = format!("wakeup-ctx{contexts}-spin{spin_rounds}");
    // The watchdog would activate a worker for queued work; make sure it never does.
    c.watchdog_period = Duration::from_secs(3600);
    c.idle_spin_rounds = spin_rounds;
    c.seed = Some(seed);
    c
}

/// Waits until every worker of `s` is parked.
fn wait_all_parked(s: &Scheduler) -> Result<(), String> {
    let deadline = Instant::now() + LIMIT;
    let mut polls = 0u32;
    loop {
        let c = s.worker_counts();
        if c.total() > 0 && c.parked() == c.total() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("the workers never all parked: {c:?}"));
        }
        polls += 1;
        if polls < 256 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

fn wait_graph(h: maestro_scheduler::GraphHandle, what: &str) -> Result<(), String> {
    match h.wait_timeout(LIMIT) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(p)) => Err(format!("{what} panicked: {p}")),
        Err(_) => Err(format!("{what} not finished after {LIMIT:?}: lost wake-up")),
    }
}

/// One round along `path`. Returns a description of what went wrong.
fn round(s: &Arc<Scheduler>, path: Path, rng: &mut fastrand::Rng) -> Result<(), String> {
    match path {
        Path::Spawn => {
            let ran = Arc::new(AtomicBool::new(false));
            let r2 = ran.clone();
            let h = s.spawn(move || r2.store(true, Ordering::SeqCst));
            let deadline = Instant::now() + LIMIT;
            while !h.is_finished() {
                if Instant::now() >= deadline {
                    return Err(format!(
                        "spawned task not run after {LIMIT:?}: lost wake-up"
                    ));
                }
                std::thread::yield_now();
            }
            h.join().map_err(|p| p.to_string())?;
            assert!(ran.load(Ordering::SeqCst));
            Ok(())
        }
        Path::PairGraph => {
            let m = Meet::new();
            let mut g = TaskGraph::new().with_label("pair");
            let root = g.add(|| {});
            for _ in 0..2 {
                let m = m.clone();
                let n = g.add(move || m.meet());
                g.edge(root, n);
            }
            wait_graph(s.submit(g).map_err(|e| e.to_string())?, "pair graph")?;
            m.check()
        }
        Path::WideGraph => {
            let m = Meet::new();
            let width = rng.usize(3..=6);
            // With two contexts, two distinct nodes of the level meet.
            let meeting = s.contexts() >= 2;
            let first = rng.usize(0..width);
            let mut second = rng.usize(0..width - 1);
            if second >= first {
                second += 1;
            }
            let ran = Arc::new(AtomicUsize::new(0));
            let mut g = TaskGraph::new().with_label("wide");
            let root = g.add(|| {});
            let ran2 = ran.clone();
            let sink = g.add(move || {
                ran2.fetch_add(1, Ordering::SeqCst);
            });
            for i in 0..width {
                let (m, ran) = (m.clone(), ran.clone());
                let meets = meeting && (i == first || i == second);
                let n = g.add(move || {
                    if meets {
                        m.meet();
                    }
                    ran.fetch_add(1, Ordering::SeqCst);
                });
                g.edge(root, n);
                g.edge(n, sink);
            }
            wait_graph(s.submit(g).map_err(|e| e.to_string())?, "wide graph")?;
            let n = ran.load(Ordering::SeqCst);
            if n != width + 1 {
                return Err(format!("wide graph ran {n} of {} nodes", width + 1));
            }
            if meeting { m.check() } else { Ok(()) }
        }
        Path::JoinInTask => {
            let m = Meet::new();
            let m2 = m.clone();
            let mut g = TaskGraph::new().with_label("join");
            g.add(move || {
                let (a, b) = (m2.clone(), m2.clone());
                maestro_scheduler::join(move || a.meet(), move || b.meet());
            });
            wait_graph(s.submit(g).map_err(|e| e.to_string())?, "join task")?;
            m.check()
        }
        Path::ScopeInTask => {
            let m = Meet::new();
            let (m2, s2) = (m.clone(), s.clone());
            let mut g = TaskGraph::new().with_label("scope");
            g.add(move || {
                let m = &*m2;
                s2.scope(|sc| {
                    sc.spawn(move |_| m.meet());
                    m.meet();
                });
            });
            wait_graph(s.submit(g).map_err(|e| e.to_string())?, "scope task")?;
            m.check()
        }
        Path::SpawnFromTask => {
            let m = Meet::new();
            let (m2, s2) = (m.clone(), s.clone());
            let inner_done = Arc::new(AtomicBool::new(false));
            let inner_done2 = inner_done.clone();
            let mut g = TaskGraph::new().with_label("spawn-from-task");
            g.add(move || {
                let m3 = m2.clone();
                let done = inner_done2.clone();
                // Not waited for here (that would enter waiting-for-graph and
                // activate a worker by another path); the client checks it below.
                let _h = s2.spawn(move || {
                    m3.meet();
                    done.store(true, Ordering::SeqCst);
                });
                m2.meet();
            });
            wait_graph(s.submit(g).map_err(|e| e.to_string())?, "spawning task")?;
            let deadline = Instant::now() + LIMIT;
            while !inner_done.load(Ordering::SeqCst) {
                if Instant::now() >= deadline {
                    return Err("task spawned from a task never ran: lost wake-up".into());
                }
                std::thread::yield_now();
            }
            m.check()
        }
        Path::InstallJoin => {
            let m = Meet::new();
            let (m2, s2) = (m.clone(), s.clone());
            let (tx, rx) = channel();
            // `install` has no timeout: run it on a helper thread we can give up on.
            std::thread::spawn(move || {
                let (a, b) = (m2.clone(), m2.clone());
                s2.join(move || a.meet(), move || b.meet());
                let _ = tx.send(());
            });
            rx.recv_timeout(LIMIT).map_err(|_| {
                format!("Scheduler::join not finished after {LIMIT:?}: lost wake-up")
            })?;
            m.check()
        }
        Path::RacingSubmitters => {
            let m = Meet::new();
            let go = Arc::new(Barrier::new(2));
            let results: Vec<Result<(), String>> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..2)
                    .map(|k| {
                        let (m, go) = (m.clone(), go.clone());
                        sc.spawn(move || {
                            let mut g = TaskGraph::new().with_label(format!("racer {k}"));
                            g.add(move || m.meet());
                            go.wait();
                            let h = s.submit(g).map_err(|e| e.to_string())?;
                            wait_graph(h, "racing submission")
                        })
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().expect("submitter thread"))
                    .collect()
            });
            results.into_iter().collect::<Result<Vec<()>, String>>()?;
            m.check()
        }
        Path::Relay => {
            let mut handles = Vec::with_capacity(RELAY_STEPS);
            for step in 0..RELAY_STEPS {
                let finishing = Arc::new(AtomicBool::new(false));
                let f2 = finishing.clone();
                // The task raises the flag, then spins a random tail before it
                // returns; we submit the next task as soon as we see the flag. So the
                // push lands at a random point of the worker's way from this task
                // through its last failed search into `park_idle`.
                let tail = if rng.bool() {
                    rng.u32(..64)
                } else {
                    rng.u32(..1024)
                };
                handles.push(s.spawn(move || {
                    f2.store(true, Ordering::SeqCst);
                    for _ in 0..tail {
                        std::hint::spin_loop();
                    }
                }));
                let deadline = Instant::now() + LIMIT;
                let mut polls = 0u32;
                while !finishing.load(Ordering::SeqCst) {
                    if polls.is_multiple_of(256) && Instant::now() >= deadline {
                        return Err(format!(
                            "relay step {step}: task not run after {LIMIT:?}: lost wake-up"
                        ));
                    }
                    pause_hot(&mut polls);
                }
            }
            for h in handles {
                h.join().map_err(|p| p.to_string())?;
            }
            Ok(())
        }
        Path::JoinRelay => {
            for step in 0..RELAY_STEPS {
                join_relay_step(s, rng).map_err(|e| format!("join relay step {step}: {e}"))?;
            }
            Ok(())
        }
    }
}

/// One step of `Path::JoinRelay`.
fn join_relay_step(s: &Scheduler, rng: &mut fastrand::Rng) -> Result<(), String> {
    // root -> {x, y}: x runs on the root's worker, y on the other one. y raises
    // a flag and spins a random tail; x waits for the flag, then forks a `join`
    // whose halves meet. The second half sits in x's deque (no `queued`
    // increment) while y's worker heads for `park_idle`: only the deque scan
    // in `has_work` (or a wake-up) lets that worker take it.
    let m = Meet::new();
    let y_done = Arc::new(AtomicBool::new(false));
    let x_failed = Arc::new(AtomicBool::new(false));
    let tail = if rng.bool() {
        rng.u32(..64)
    } else {
        rng.u32(..1024)
    };
    let mut g = TaskGraph::new().with_label("join-relay");
    let root = g.add(|| {});
    let (m2, y2, xf) = (m.clone(), y_done.clone(), x_failed.clone());
    let x = g.add(move || {
        let deadline = Instant::now() + LIMIT;
        let mut polls = 0u32;
        while !y2.load(Ordering::SeqCst) {
            if Instant::now() >= deadline {
                xf.store(true, Ordering::SeqCst);
                return;
            }
            pause_hot(&mut polls);
        }
        let (a, b) = (m2.clone(), m2.clone());
        maestro_scheduler::join(move || a.meet(), move || b.meet());
    });
    let y3 = y_done.clone();
    let y = g.add(move || {
        y3.store(true, Ordering::SeqCst);
        for _ in 0..tail {
            std::hint::spin_loop();
        }
    });
    g.edge(root, x);
    g.edge(root, y);
    wait_graph(s.submit(g).map_err(|e| e.to_string())?, "join relay")?;
    if x_failed.load(Ordering::SeqCst) {
        return Err("the second node of the root never ran: lost wake-up".into());
    }
    m.check()
}

#[test]
fn no_lost_wakeup_without_watchdog() {
    let seed = std::env::var("MAESTRO_WAKEUP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    let rounds = std::env::var("MAESTRO_WAKEUP_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_ROUNDS);
    let budget = Duration::from_secs(
        std::env::var("MAESTRO_WAKEUP_BUDGET_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(DEFAULT_BUDGET_SECS),
    );
    println!(
        "no_lost_wakeup: seed {seed}, {rounds} rounds (replay with MAESTRO_WAKEUP_SEED={seed})"
    );
    let mut rng = fastrand::Rng::with_seed(seed);
    // Workers park right after a failed search, or after one more round. With two
    // contexts a parked second worker often covers for the first; with one context
    // the Dekker pair of `park_idle` / `notify_work` alone decides.
    let scheds = [
        Arc::new(Scheduler::new(config(seed, 2, 0)).expect("scheduler starts")),
        Arc::new(Scheduler::new(config(seed ^ 1, 2, 1)).expect("scheduler starts")),
        Arc::new(Scheduler::new(config(seed ^ 2, 1, 0)).expect("scheduler starts")),
    ];
    let mut per_path = [0usize; PATHS.len()];
    let mut racing_rounds = 0usize;
    let start = Instant::now();
    let mut which = 0;
    let mut done = 0;
    for r in 0..rounds {
        if start.elapsed() >= budget {
            break;
        }
        // Mostly start from "everyone parked". Otherwise stay on the scheduler of the
        // previous round and submit after a random delay of a few microseconds, while
        // its workers are on their way from the last task to `park_idle`: the race
        // the re-check of `has_work` under the idle lock exists for.
        let while_parking = r > 0 && rng.u8(..2) == 0;
        if !while_parking {
            which = rng.usize(..scheds.len());
        }
        let s = &scheds[which];
        // Rendezvous paths need two workers; the one-context scheduler gets the rest.
        let p = loop {
            let p = pick_path(&mut rng);
            if s.contexts() >= 2 || !PATHS[p].needs_two_workers() {
                break p;
            }
        };
        let path = PATHS[p];
        let outcome = if while_parking {
            for _ in 0..rng.u32(..4_000) {
                std::hint::spin_loop();
            }
            racing_rounds += 1;
            Ok(())
        } else {
            wait_all_parked(s)
        }
        .and_then(|()| round(s, path, &mut rng));
        if let Err(why) = outcome {
            panic!(
                "round {r} of {rounds}, path {path:?}, scheduler {} (idle_spin_rounds {}), \
                 submitted while parking: {while_parking}, seed {seed}: {why}\n\
                 counts: {:?}\nstats: {:?}\n(replay with MAESTRO_WAKEUP_SEED={seed})",
                s.config().name,
                s.config().idle_spin_rounds,
                s.worker_counts(),
                s.stats(),
            );
        }
        per_path[p] += 1;
        done += 1;
    }
    for s in &scheds {
        wait_all_parked(s).unwrap_or_else(|why| panic!("after the last round, seed {seed}: {why}"));
        let st = s.stats();
        assert_eq!(
            st.watchdog_activations, 0,
            "the watchdog must not have helped: {st:?}"
        );
        println!(
            "{}: parks {}, wake-ups {}, workers created {}, tasks executed {}",
            st.name, st.workers_parked, st.workers_woken, st.workers_created, st.tasks_executed
        );
    }
    println!(
        "no_lost_wakeup: {done} of {rounds} rounds ({racing_rounds} while parking) in {:?}; per path: {:?}",
        start.elapsed(),
        PATHS.iter().zip(per_path).collect::<Vec<_>>()
    );
}
