//! Statements of a benchmark run under a workload class (`--class SPEC` of
//! `maestro tpch throughput`/`query`): each statement passes the class's
//! admission control, runs with the class's statement token (its timeout and
//! memory limits) on a thread in the class, and what admission rejected or
//! the class's limits stopped is counted, not lost.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use maestro_execution::ExecError;
use maestro_scheduler::{CancelToken, ClassId, ClassSpec, Scheduler};

/// How long a client backs off after a rejection before its next statement
/// (guessed: a few short queries' time); `bench workload`'s query clients
/// use it too.
pub const REJECTED_BACKOFF: Duration = Duration::from_millis(10);

/// One class's statements in one run, with their counts.
pub struct ClassRun<'a> {
    scheduler: &'a Scheduler,
    class: ClassId,
    /// Statements admission control rejected (retryable; not run).
    rejected: AtomicUsize,
    /// Statements the class's timeout or memory limits stopped.
    stopped: AtomicUsize,
}

/// What became of one statement.
pub enum Ran<T> {
    Done(T),
    /// Rejected by admission control (counted).
    Rejected,
    /// Stopped by the class's timeout or memory limit (counted).
    Stopped,
}

impl<'a> ClassRun<'a> {
    /// `spec` defined on `scheduler` (or, if a class of its name exists
    /// there already, that class: runs repeat on one scheduler).
    pub fn define(scheduler: &'a Scheduler, spec: &ClassSpec) -> Result<Self, String> {
        let class = match scheduler.class_by_name(&spec.name) {
            Some(c) => c,
            None => scheduler
                .define_class(spec)
                .map_err(|e| format!("--class {}: {e}", spec.name))?,
        };
        Ok(ClassRun {
            scheduler,
            class,
            rejected: AtomicUsize::new(0),
            stopped: AtomicUsize::new(0),
        })
    }

    pub fn class(&self) -> ClassId {
        self.class
    }

    /// Runs one statement: admission, then `run` with the class's token on
    /// this thread in the class (everything it submits runs in the class).
    pub fn run<T>(
        &self,
        run: impl FnOnce(CancelToken) -> Result<T, ExecError>,
    ) -> Result<Ran<T>, ExecError> {
        let _admitted = match self.scheduler.admit(self.class) {
            Ok(a) => a,
            Err(_) => {
                // Relaxed: a count read after the run's threads joined.
                self.rejected.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(REJECTED_BACKOFF);
                return Ok(Ran::Rejected);
            }
        };
        let token = self.scheduler.statement_token(self.class, None);
        match maestro_scheduler::with_class(self.class, || run(token)) {
            Ok(t) => Ok(Ran::Done(t)),
            Err(ExecError::Cancelled(_)) => {
                self.stopped.fetch_add(1, Ordering::Relaxed);
                Ok(Ran::Stopped)
            }
            Err(e) => Err(e),
        }
    }

    /// (rejected, stopped) so far.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.rejected.load(Ordering::Relaxed),
            self.stopped.load(Ordering::Relaxed),
        )
    }
}
