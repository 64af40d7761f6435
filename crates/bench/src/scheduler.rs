//! `maestro bench scheduler`: Maestro's presets against rayon (the anchor) on
//! (a) fork-join, (b) one million tiny independent tasks, (c) a blocking mix.
//!
//! Variants run interleaved (for each repetition, every variant once, in an
//! order rotated per repetition: [`crate::reps`]) so that machine noise hits all
//! of them alike; each row is the median over the repetitions with its min–max
//! (before the shared harness, the best repetition counted).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use maestro_scheduler::{Scheduler, SchedulerConfig};
use serde::Serialize;

use crate::cpu::measure;
use crate::{Report, ResultRow};

/// Sizes of the three cases.
#[derive(Clone, Debug, Serialize)]
pub struct Params {
    /// Fork-join: elements summed, and the leaf size below which a range is summed
    /// sequentially.
    pub fork_join_elements: u64,
    pub fork_join_leaf: u64,
    /// Tiny tasks: how many.
    pub tiny_tasks: u64,
    /// Blocking mix: tasks, rounds per task, CPU work per round (µs, calibrated once
    /// into a fixed iteration count) and wait per round (µs, on an event a timer
    /// thread sets).
    pub blocking_tasks: u64,
    pub blocking_rounds: u32,
    pub blocking_cpu_us: u64,
    pub blocking_wait_us: u64,
    /// Repetitions; the median counts.
    pub reps: usize,
    /// Which cases to run (names from [`CASES`]).
    pub cases: Vec<String>,
}

impl Params {
    pub fn full() -> Self {
        Params {
            fork_join_elements: 1 << 28,
            fork_join_leaf: 1024,
            tiny_tasks: 1_000_000,
            blocking_tasks: 2000,
            blocking_rounds: 4,
            blocking_cpu_us: 50,
            blocking_wait_us: 500,
            reps: crate::reps::default_reps(false),
            cases: CASES.iter().map(|c| c.to_string()).collect(),
        }
    }
    pub fn quick() -> Self {
        Params {
            fork_join_elements: 1 << 22,
            fork_join_leaf: 1024,
            tiny_tasks: 50_000,
            blocking_tasks: 100,
            blocking_rounds: 2,
            blocking_cpu_us: 50,
            blocking_wait_us: 500,
            reps: crate::reps::default_reps(true),
            cases: CASES.iter().map(|c| c.to_string()).collect(),
        }
    }
}

/// The variants this experiment knows, rayon first (the anchor).
pub const VARIANTS: [&str; 5] = [
    "rayon",
    "single-pool",
    "single-pool-paper",
    "single-pool-nosys",
    "single-hints",
];

/// The cases, by name.
pub const CASES: [&str; 3] = ["fork_join", "tiny_tasks", "blocking_mix"];

enum Runner {
    Rayon(rayon::ThreadPool),
    Maestro(Scheduler),
}

impl Runner {
    fn new(variant: &str, contexts: usize) -> Result<Runner, String> {
        if variant == "rayon" {
            return rayon::ThreadPoolBuilder::new()
                .num_threads(contexts)
                .build()
                .map(Runner::Rayon)
                .map_err(|e| e.to_string());
        }
        let cfg = SchedulerConfig::preset(variant)
            .map_err(|e| e.to_string())?
            .with_contexts(contexts);
        Scheduler::new(cfg)
            .map(Runner::Maestro)
            .map_err(|e| e.to_string())
    }
}

// ---- (a) fork-join ------------------------------------------------------------------

#[inline]
fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x.wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

fn leaf_sum(lo: u64, hi: u64) -> u64 {
    (lo..hi).fold(0u64, |a, i| a.wrapping_add(mix(i)))
}

fn sum_maestro(lo: u64, hi: u64, leaf: u64) -> u64 {
    if hi - lo <= leaf {
        return leaf_sum(lo, hi);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) =
        maestro_scheduler::join(|| sum_maestro(lo, mid, leaf), || sum_maestro(mid, hi, leaf));
    a.wrapping_add(b)
}

fn sum_rayon(lo: u64, hi: u64, leaf: u64) -> u64 {
    if hi - lo <= leaf {
        return leaf_sum(lo, hi);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = rayon::join(|| sum_rayon(lo, mid, leaf), || sum_rayon(mid, hi, leaf));
    a.wrapping_add(b)
}

fn fork_join(r: &Runner, p: &Params) -> u64 {
    let (n, leaf) = (p.fork_join_elements, p.fork_join_leaf);
    match r {
        Runner::Rayon(pool) => pool.install(|| sum_rayon(0, n, leaf)),
        Runner::Maestro(s) => s.install(|| sum_maestro(0, n, leaf)),
    }
}

// ---- (b) tiny tasks -------------------------------------------------------------------

/// Sharded so that counting completions does not dominate the tasks themselves.
struct ShardedCounter([crossbeam_pad::Padded; 64]);

mod crossbeam_pad {
    #[repr(align(128))]
    #[derive(Default)]
    pub struct Padded(pub std::sync::atomic::AtomicU64);
}

impl ShardedCounter {
    fn new() -> Self {
        ShardedCounter(std::array::from_fn(|_| crossbeam_pad::Padded::default()))
    }
    fn add(&self, i: u64) {
        self.0[(i % 64) as usize].0.fetch_add(1, Ordering::Relaxed);
    }
    fn total(&self) -> u64 {
        self.0.iter().map(|p| p.0.load(Ordering::Relaxed)).sum()
    }
}

fn tiny_tasks(r: &Runner, p: &Params) -> u64 {
    let counter = ShardedCounter::new();
    let n = p.tiny_tasks;
    match r {
        Runner::Rayon(pool) => pool.scope(|sc| {
            for i in 0..n {
                let c = &counter;
                sc.spawn(move |_| c.add(black_box(i)));
            }
        }),
        Runner::Maestro(s) => s.scope(|sc| {
            for i in 0..n {
                let c = &counter;
                sc.spawn(move |_| c.add(black_box(i)));
            }
        }),
    }
    counter.total()
}

// ---- (c) blocking mix -----------------------------------------------------------------

/// A simulated I/O device: a thread that sets events when they are due.
struct Timer {
    queue: Mutex<TimerQueue>,
    cv: Condvar,
}

#[derive(Default)]
struct TimerQueue {
    due: BinaryHeap<Reverse<(Instant, u64)>>,
    signals: Vec<(u64, Arc<dyn SetSignal>)>,
    stopped: bool,
}

/// An event a task waits on and the timer sets: Maestro's scheduler-aware one, or
/// the std equivalent for rayon.
trait Signal: Default + Send + Sync + 'static {
    fn set(&self);
    fn wait(&self);
}

impl Signal for maestro_scheduler::sync::Event {
    fn set(&self) {
        maestro_scheduler::sync::Event::set(self);
    }
    fn wait(&self) {
        maestro_scheduler::sync::Event::wait(self);
    }
}

/// The object-safe half of [`Signal`] the timer keeps.
trait SetSignal: Send + Sync {
    fn set_now(&self);
}

impl<S: Signal> SetSignal for S {
    fn set_now(&self) {
        self.set();
    }
}

/// The std equivalent of an event, for rayon.
#[derive(Default)]
struct StdEvent {
    set: Mutex<bool>,
    cv: Condvar,
}

impl Signal for StdEvent {
    fn set(&self) {
        *self.set.lock().unwrap() = true;
        self.cv.notify_all();
    }
    fn wait(&self) {
        let mut s = self.set.lock().unwrap();
        while !*s {
            s = self.cv.wait(s).unwrap();
        }
    }
}

impl Timer {
    fn start() -> (Arc<Timer>, std::thread::JoinHandle<()>) {
        let t = Arc::new(Timer {
            queue: Mutex::new(TimerQueue::default()),
            cv: Condvar::new(),
        });
        let t2 = t.clone();
        let h = std::thread::Builder::new()
            .name("bench-timer".into())
            .spawn(move || t2.run())
            .expect("timer thread");
        (t, h)
    }

    fn after(&self, d: Duration, s: Arc<dyn SetSignal>) {
        let mut q = self.queue.lock().unwrap();
        let id = fastid();
        q.due.push(Reverse((Instant::now() + d, id)));
        q.signals.push((id, s));
        drop(q);
        self.cv.notify_one();
    }

    fn stop(&self) {
        self.queue.lock().unwrap().stopped = true;
        self.cv.notify_one();
    }

    fn run(&self) {
        let mut q = self.queue.lock().unwrap();
        loop {
            if q.stopped {
                return;
            }
            let now = Instant::now();
            let mut due = Vec::new();
            while let Some(Reverse((t, id))) = q.due.peek().copied() {
                if t > now {
                    break;
                }
                q.due.pop();
                if let Some(pos) = q.signals.iter().position(|(i, _)| *i == id) {
                    due.push(q.signals.swap_remove(pos).1);
                }
            }
            if !due.is_empty() {
                drop(q);
                for s in due {
                    s.set_now();
                }
                q = self.queue.lock().unwrap();
                continue;
            }
            q = match q.due.peek().copied() {
                Some(Reverse((t, _))) => {
                    self.cv
                        .wait_timeout(q, t.saturating_duration_since(now))
                        .unwrap()
                        .0
                }
                None => self.cv.wait(q).unwrap(),
            };
        }
    }
}

fn fastid() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Iterations of `mix` that take about one microsecond here (calibrated once).
fn iterations_per_us() -> u64 {
    let n = 2_000_000u64;
    let t = Instant::now();
    black_box(leaf_sum(0, n));
    let us = t.elapsed().as_secs_f64() * 1e6;
    ((n as f64 / us.max(1.0)) as u64).max(1)
}

/// One task of the blocking mix: rounds of CPU work, then a wait on an `S` the timer
/// sets after `blocking_wait_us`.
fn blocking_task<S: Signal>(timer: &Timer, p: &Params, iters: u64) {
    for _ in 0..p.blocking_rounds {
        black_box(leaf_sum(0, iters * p.blocking_cpu_us));
        let ev = Arc::new(S::default());
        timer.after(Duration::from_micros(p.blocking_wait_us), ev.clone());
        ev.wait();
    }
}

fn blocking_mix(r: &Runner, p: &Params, timer: &Timer, iters: u64) -> u64 {
    let done = AtomicU64::new(0);
    match r {
        Runner::Rayon(pool) => pool.scope(|sc| {
            for _ in 0..p.blocking_tasks {
                let done = &done;
                sc.spawn(move |_| {
                    blocking_task::<StdEvent>(timer, p, iters);
                    done.fetch_add(1, Ordering::Relaxed);
                });
            }
        }),
        Runner::Maestro(s) => s.scope(|sc| {
            for _ in 0..p.blocking_tasks {
                let done = &done;
                sc.spawn(move |_| {
                    blocking_task::<maestro_scheduler::sync::Event>(timer, p, iters);
                    done.fetch_add(1, Ordering::Relaxed);
                });
            }
        }),
    }
    done.load(Ordering::Relaxed)
}

// ---- driver ------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    ForkJoin,
    TinyTasks,
    BlockingMix,
}

impl Case {
    /// How many tasks the case runs, for the task-throughput cases (fork-join
    /// reports its time instead).
    fn tasks(self, p: &Params) -> Option<u64> {
        match self {
            Case::ForkJoin => None,
            Case::TinyTasks => Some(p.tiny_tasks),
            Case::BlockingMix => Some(p.blocking_tasks),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Case::ForkJoin => "fork_join",
            Case::TinyTasks => "tiny_tasks",
            Case::BlockingMix => "blocking_mix",
        }
    }
}

/// Runs the experiment. `progress` receives one line per measurement.
pub fn run(
    contexts: usize,
    variants: &[String],
    params: &Params,
    mut progress: impl FnMut(&str),
) -> Result<Report, String> {
    for v in variants {
        if !VARIANTS.contains(&v.as_str()) {
            return Err(format!(
                "unknown variant '{v}' for bench scheduler (expected one of {})",
                VARIANTS.join(", ")
            ));
        }
    }
    for c in &params.cases {
        if !CASES.contains(&c.as_str()) {
            return Err(format!(
                "unknown case '{c}' for bench scheduler (expected one of {})",
                CASES.join(", ")
            ));
        }
    }
    let runners: Vec<(String, Runner)> = variants
        .iter()
        .map(|v| Runner::new(v, contexts).map(|r| (v.clone(), r)))
        .collect::<Result<_, _>>()?;
    let iters = iterations_per_us();
    let (timer, timer_thread) = Timer::start();
    let expected_sum = leaf_sum(0, params.fork_join_elements);
    let mut results = Vec::new();
    let cases = [Case::ForkJoin, Case::TinyTasks, Case::BlockingMix]
        .into_iter()
        .filter(|c| params.cases.iter().any(|n| n == c.name()));
    let row =
        |case: Case, variant: &str, metric: &str, value: f64, unit: &str, higher: bool| ResultRow {
            case: case.name().into(),
            variant: variant.into(),
            metric: metric.into(),
            value,
            unit: unit.into(),
            higher_is_better: higher,
            ..Default::default()
        };
    for case in cases {
        let per_rep = crate::reps::repeat(&runners, params.reps, |(name, runner), rep| {
            let m = measure(contexts, || match case {
                Case::ForkJoin => fork_join(runner, params),
                Case::TinyTasks => tiny_tasks(runner, params),
                Case::BlockingMix => blocking_mix(runner, params, &timer, iters),
            });
            let expect = case.tasks(params).unwrap_or(expected_sum);
            if m.value != expect {
                return Err(format!(
                    "{} on {name} computed {} instead of {expect}",
                    case.name(),
                    m.value
                ));
            }
            let secs = m.wall.as_secs_f64();
            progress(&format!(
                "{:<13} rep {}/{} {:<18} {:>9.4} s  cpu {:>5.1} %",
                case.name(),
                rep + 1,
                params.reps,
                name,
                secs,
                m.cpu_utilisation * 100.0
            ));
            let speed = match case.tasks(params) {
                None => row(case, name, "seconds", secs, "s", false),
                Some(n) => row(
                    case,
                    name,
                    "tasks_per_second",
                    n as f64 / secs,
                    "tasks/s",
                    true,
                ),
            };
            let cpu = row(
                case,
                name,
                "cpu_utilisation",
                m.cpu_utilisation,
                "fraction",
                true,
            );
            Ok(vec![speed, cpu])
        });
        let mut per_rep = match per_rep {
            Ok(rows) => rows,
            Err(e) => {
                timer.stop();
                let _ = timer_thread.join();
                return Err(e);
            }
        };
        for rows in &mut per_rep {
            crate::fill_ratios(rows);
        }
        results.extend(crate::reps::aggregate(per_rep));
    }
    timer.stop();
    let _ = timer_thread.join();
    let mut extra = Vec::new();
    let mut attachments = Vec::new();
    for (name, r) in &runners {
        if let Runner::Maestro(s) = r {
            let st = s.stats();
            attachments.push((format!("scheduler-{name}-report.json"), s.report_json()));
            extra.push(ResultRow {
                case: "all".into(),
                variant: name.clone(),
                metric: "workers_peak".into(),
                value: st.workers_peak as f64,
                unit: "threads".into(),
                ratio_vs_rayon: None,
                higher_is_better: false,
                ..Default::default()
            });
        }
    }
    results.extend(extra);
    let report = Report {
        experiment: "scheduler".into(),
        contexts,
        params: serde_json::to_value(params).expect("params serialize"),
        results,
        attachments,
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_has_every_variant_and_sane_values() {
        let mut p = Params::quick();
        p.fork_join_elements = 1 << 16;
        p.tiny_tasks = 5000;
        p.blocking_tasks = 20;
        let variants: Vec<String> = VARIANTS.iter().map(|s| s.to_string()).collect();
        let r = run(2, &variants, &p, |_| {}).unwrap();
        for v in VARIANTS {
            for case in ["fork_join", "tiny_tasks", "blocking_mix"] {
                let row = r
                    .results
                    .iter()
                    .find(|x| x.variant == v && x.case == case && x.metric != "cpu_utilisation")
                    .unwrap_or_else(|| panic!("missing {v}/{case}"));
                assert!(row.value.is_finite() && row.value > 0.0, "{row:?}");
                if v != "rayon" {
                    assert!(row.ratio_vs_rayon.is_some_and(|x| x.is_finite() && x > 0.0));
                }
            }
        }
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["experiment"], "scheduler");
        assert_eq!(json["contexts"], 2);
        assert!(r.table().contains("blocking_mix"));
        // Each Maestro variant attaches its counters and watchdog timeline.
        assert_eq!(r.attachments.len(), VARIANTS.len() - 1);
        for (name, body) in &r.attachments {
            let v: serde_json::Value = serde_json::from_str(body).unwrap();
            assert!(v["stats"]["tasks_executed"].as_u64().unwrap() > 0, "{name}");
            assert!(v["timeline"].is_array(), "{name}");
        }
    }

    #[test]
    fn unknown_variant_is_an_error() {
        let e = run(2, &["tbb".to_string()], &Params::quick(), |_| {}).unwrap_err();
        assert!(e.contains("unknown variant 'tbb'"), "{e}");
    }
}
