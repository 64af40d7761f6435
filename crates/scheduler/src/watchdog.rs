//! The watchdog thread (paper §5–6): every period it activates workers while the
//! active level is below the contexts and work is queued, samples the timeline, and
//! at its own period updates the concurrency hint.
//!
//! The decision is a pure function ([`watchdog_wants`]) so that it can be tested
//! without threads or clocks.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Instant;

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
            tick(&shared);
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

fn tick(shared: &Shared) {
    let c = shared.counts.load();
    let queued = shared.queued_estimate();
    let want = watchdog_wants(
        shared.config.contexts,
        shared.active_level(c),
        queued,
        shared.has_work(),
    );
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
}
