//! A reusable barrier on the scheduler-aware mutex and condvar. Waiters count as
//! *blocked*, so a graph level of more nodes than contexts, all meeting at one
//! barrier, completes: the watchdog adds workers until all have arrived.

use std::time::{Duration, Instant};

use super::{Condvar, Mutex};

struct State {
    arrived: usize,
    generation: u64,
}

pub struct Barrier {
    n: usize,
    state: Mutex<State>,
    cv: Condvar,
}

/// Returned to every waiter; exactly one per generation is the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    pub fn is_leader(self) -> bool {
        self.0
    }
}

impl Barrier {
    pub const fn new(n: usize) -> Self {
        Barrier {
            n,
            state: Mutex::new(State {
                arrived: 0,
                generation: 0,
            }),
            cv: Condvar::new(),
        }
    }

    pub fn wait(&self) -> BarrierWaitResult {
        self.wait_deadline(None)
            .expect("a wait without deadline cannot time out")
    }

    /// Waits at most `timeout`; None if the barrier did not open in time (this
    /// waiter then withdraws its arrival).
    pub fn wait_timeout(&self, timeout: Duration) -> Option<BarrierWaitResult> {
        self.wait_deadline(Some(Instant::now() + timeout))
    }

    fn wait_deadline(&self, deadline: Option<Instant>) -> Option<BarrierWaitResult> {
        let mut s = self.state.lock();
        let generation = s.generation;
        s.arrived += 1;
        if s.arrived >= self.n {
            s.arrived = 0;
            s.generation += 1;
            drop(s);
            self.cv.notify_all();
            return Some(BarrierWaitResult(true));
        }
        while s.generation == generation {
            match deadline {
                None => self.cv.wait(&mut s),
                Some(d) => {
                    if self.cv.wait_until(&mut s, d).timed_out() && s.generation == generation {
                        s.arrived -= 1;
                        return None;
                    }
                }
            }
        }
        Some(BarrierWaitResult(false))
    }
}
