//! The watchdog thread (paper §5–6): every period it activates workers while the
//! active level is below the contexts and work is queued, samples the timeline, and
//! at its own period updates the concurrency hint.
//!
//! It also watches for stalls ([`StallWatch`], PROTOCOL.md "Stall rescue").
//!
//! The decisions are pure ([`watchdog_wants`], [`StallWatch::observe`]) so that
//! they can be tested without threads or clocks.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::admission::LoadAverage;
use crate::config::HintPolicy;
use crate::hint::HintEstimator;
use crate::shared::{Activated, Activation, Shared};

/// How many workers the watchdog should activate this tick: the deficit of the
/// active level against the contexts, but only if work is queued, and no more than
/// the queued tasks (each activation may otherwise find nothing to do).
pub fn watchdog_wants(
    contexts: usize,
    active_level: usize,
    queued: usize,
    has_work: bool,
) -> usize {
    if !has_work || active_level >= contexts {
        return 0;
    }
    (contexts - active_level).min(queued.max(1))
}

/// What the stall watch concludes at one tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallVerdict {
    /// No stall: nothing waits with the level full, or a task was taken since
    /// the last tick.
    Progressing,
    /// Work waits with the level full and no task was taken, for less than the
    /// bound so far.
    Watching,
    /// Work has waited with the level full and no task taken for the whole
    /// bound: activate one worker beyond the contexts.
    Rescue,
}

/// Detects a stall: queued work, the active level at (or above) the contexts,
/// and no queued task taken for a bound — every context is held by work that
/// waits, unknown to the scheduler, possibly for the queued work itself.
///
/// The first rescue of a stall comes after `first`; until a tick sees no
/// waiting work, the stall is taken to go on, and each tick without a task
/// taken earns the next rescue (`again`, one watchdog period): a stuck client
/// that hands off one statement after another needs a rescue per statement,
/// and each would otherwise cost the whole first bound.
#[derive(Debug)]
pub struct StallWatch {
    first: Duration,
    again: Duration,
    taken_seen: u64,
    /// When the current no-progress stretch began (`None`: not watching).
    since: Option<Instant>,
    /// A rescue happened and work has waited with the level full ever since.
    rescued: bool,
}

impl StallWatch {
    /// A watch whose first rescue comes after `first` without progress, later
    /// ones (while work keeps waiting) after `again`; a zero `first` disables it.
    pub fn new(first: Duration, again: Duration) -> StallWatch {
        StallWatch {
            first,
            again,
            taken_seen: 0,
            since: None,
            rescued: false,
        }
    }

    /// One tick: `taken` is the monotonic count of tasks taken so far,
    /// `waiting` whether work is queued while the level is at the contexts.
    pub fn observe(&mut self, now: Instant, taken: u64, waiting: bool) -> StallVerdict {
        let progressed = taken != self.taken_seen;
        self.taken_seen = taken;
        if self.first.is_zero() || !waiting {
            self.since = None;
            self.rescued = false;
            return StallVerdict::Progressing;
        }
        if progressed {
            self.since = Some(now);
            return StallVerdict::Progressing;
        }
        let bound = if self.rescued { self.again } else { self.first };
        match self.since {
            None => {
                self.since = Some(now);
                StallVerdict::Watching
            }
            Some(t) if now.saturating_duration_since(t) >= bound => {
                self.since = Some(now);
                self.rescued = true;
                StallVerdict::Rescue
            }
            Some(_) => StallVerdict::Watching,
        }
    }
}

pub(crate) struct Watchdog {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub(crate) fn start(shared: Arc<Shared>) -> std::io::Result<Watchdog> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("maestro-{}-watchdog", shared.config.name))
            .spawn(move || run(shared, stop2))?;
        Ok(Watchdog {
            stop,
            thread: Some(thread),
        })
    }

    pub(crate) fn stop(&mut self) {
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(shared: Arc<Shared>, stop: Arc<(Mutex<bool>, Condvar)>) {
    let cfg = &shared.config;
    let period = cfg.watchdog_period;
    let mut hint = match cfg.hint {
        HintPolicy::Ema {
            alpha,
            period,
            reset_fraction,
        } => Some((
            HintEstimator::new(cfg.contexts, alpha, reset_fraction),
            period,
        )),
        HintPolicy::PinnedToContexts => None,
    };
    let mut load = LoadAverage::new(cfg.admission_lambda);
    let mut memory = LoadAverage::new(cfg.admission_lambda);
    let mut next_load = Instant::now() + cfg.admission_sample;
    let mut next_tick = Instant::now() + period;
    let mut stalls = StallWatch::new(cfg.stall_rescue_after, period);
    let mut next_hint = hint.as_ref().map(|(_, p)| Instant::now() + *p);
    loop {
        {
            let mut stopped = stop.0.lock();
            let wake_at = next_hint.map_or(next_tick, |h| h.min(next_tick));
            while !*stopped && Instant::now() < wake_at {
                stop.1.wait_until(&mut stopped, wake_at);
            }
            if *stopped {
                return;
            }
        }
        let now = Instant::now();
        if let (Some((est, hint_period)), Some(at)) = (hint.as_mut(), next_hint.as_mut())
            && now >= *at
        {
            let c = shared.counts.load();
            let h = est.sample(shared.active_level(c));
            shared.hint.store(h, Ordering::Relaxed);
            shared
                .hint_free_bits
                .store(est.raw().to_bits(), Ordering::Relaxed);
            *at += *hint_period;
            if *at < now {
                *at = now + *hint_period;
            }
        }
        if now >= next_tick {
            tick(&shared, &mut stalls, now);
            load.add(shared.demand());
            if let Some(budget) = cfg.memory_budget_bytes {
                memory.add(shared.memory_charged() as f64 / budget as f64);
            }
            if now >= next_load {
                let l = load.fold();
                shared
                    .admission_load_bits
                    .store(l.to_bits(), Ordering::Relaxed);
                if cfg.memory_budget_bytes.is_some() {
                    let m = memory.fold();
                    shared
                        .admission_memory_bits
                        .store(m.to_bits(), Ordering::Relaxed);
                }
                shared.regrant_admissions(shared.admission_loads());
                next_load = now + cfg.admission_sample;
            }
            next_tick += period;
            if next_tick < now {
                // Fell behind (a descheduled watchdog): do not burst to catch up.
                next_tick = now + period;
            }
        }
    }
}

fn tick(shared: &Shared, stalls: &mut StallWatch, now: Instant) {
    let active = shared.active_level(shared.counts.load());
    let queued = shared.queued_estimate();
    let has_work = shared.has_work();
    let full = active >= shared.config.contexts;
    if stalls.observe(now, shared.tasks_taken(), has_work && full) == StallVerdict::Rescue {
        shared.rescue();
    }
    let want = watchdog_wants(shared.config.contexts, active, queued, has_work);
    for _ in 0..want {
        match shared.activate(Activation::Watchdog) {
            Activated::Woken | Activated::Created => {}
            Activated::NotNeeded | Activated::Declined | Activated::CapReached => break,
        }
    }
    let sample = shared.sample();
    shared.timeline.lock().push(sample);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wants_only_the_deficit_and_only_with_work() {
        assert_eq!(watchdog_wants(4, 1, 10, true), 3);
        assert_eq!(watchdog_wants(4, 1, 10, false), 0);
        assert_eq!(watchdog_wants(4, 4, 10, true), 0);
        assert_eq!(watchdog_wants(4, 6, 10, true), 0);
        assert_eq!(watchdog_wants(4, 0, 2, true), 2);
        // Work only in deques (queued counter 0) still earns one activation.
        assert_eq!(watchdog_wants(4, 0, 0, true), 1);
    }

    const FIRST: Duration = Duration::from_millis(100);
    const AGAIN: Duration = Duration::from_millis(20);

    #[test]
    fn a_stall_is_rescued_after_the_first_bound_then_every_tick_without_progress() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut w = StallWatch::new(FIRST, AGAIN);
        assert_eq!(w.observe(ms(0), 5, true), StallVerdict::Progressing);
        assert_eq!(w.observe(ms(20), 5, true), StallVerdict::Watching);
        assert_eq!(w.observe(ms(99), 5, true), StallVerdict::Watching);
        assert_eq!(w.observe(ms(100), 5, true), StallVerdict::Rescue);
        // The rescued worker took a task: progress, but work still waits.
        assert_eq!(w.observe(ms(120), 6, true), StallVerdict::Progressing);
        // Stuck again: the next rescue after one `AGAIN`, not another `FIRST`.
        assert_eq!(w.observe(ms(139), 6, true), StallVerdict::Watching);
        assert_eq!(w.observe(ms(140), 6, true), StallVerdict::Rescue);
        assert_eq!(w.observe(ms(160), 6, true), StallVerdict::Rescue);
    }

    #[test]
    fn no_waiting_work_ends_the_stall_and_the_next_waits_the_first_bound() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut w = StallWatch::new(FIRST, AGAIN);
        assert_eq!(w.observe(ms(0), 0, true), StallVerdict::Watching);
        // A task taken: a fresh stretch starts now.
        assert_eq!(w.observe(ms(90), 1, true), StallVerdict::Progressing);
        assert_eq!(w.observe(ms(180), 1, true), StallVerdict::Watching);
        assert_eq!(w.observe(ms(190), 1, true), StallVerdict::Rescue);
        // Nothing waits (or the level has room): no stall, whatever the time.
        assert_eq!(w.observe(ms(400), 1, false), StallVerdict::Progressing);
        assert_eq!(w.observe(ms(420), 1, true), StallVerdict::Watching);
        assert_eq!(w.observe(ms(500), 1, true), StallVerdict::Watching);
        assert_eq!(w.observe(ms(520), 1, true), StallVerdict::Rescue);
    }

    #[test]
    fn a_zero_bound_never_rescues() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(Duration::ZERO, AGAIN);
        for n in 0..10 {
            let at = t0 + Duration::from_secs(n);
            assert_eq!(w.observe(at, 0, true), StallVerdict::Progressing);
        }
    }
}
