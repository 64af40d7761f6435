//! Helpers shared by the scheduler's integration tests.

use std::sync::Arc;
use std::time::{Duration, Instant};

use maestro_scheduler::Scheduler;

/// Turns a hang into a failure; never reached on a healthy run.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// `s`, once all its workers have gone idle (parked), so that every context
/// is free when a test begins.
pub fn idle(s: Scheduler) -> Arc<Scheduler> {
    let s = Arc::new(s);
    wait_for("the workers to park", || {
        let c = s.worker_counts();
        c.parked() == c.total()
    });
    s
}

/// Waits until `cond` holds, failing after [`DEADLINE`].
pub fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}
