//! Cancellation and statement timeouts: a [`CancelToken`] shared by whoever
//! may stop a piece of work (another thread, a deadline) and the work itself,
//! which checks it at *checkpoints* — between morsels of an operator, before a
//! lock wait — and stops there.
//!
//! Stopping unwinds. [`CancelToken::checkpoint`] raises a [`Cancelled`]
//! payload with `resume_unwind` (no panic message, no hook): the scheduler
//! carries a task's unwinding to whoever waits for it (`join`, `scope`,
//! `parallel_for`, `install` all re-raise their tasks' payloads), so one
//! checkpoint in one task stops the whole statement, every task of it that
//! starts later stops at its first checkpoint, and everything the statement
//! allocated is dropped on the way out. [`catch_cancelled`] at the statement's
//! root turns that unwinding back into a value and re-raises anything else
//! (a real panic stays a panic).
//!
//! Bounded stop time: the work stops at its next checkpoint, so the bound is
//! the longest stretch between two checkpoints (an operator's morsel), not the
//! statement's length.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crate::memory::StatementMemory;

/// Why a statement stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// Someone called [`CancelToken::cancel`].
    Cancelled,
    /// The token's deadline passed (a statement timeout).
    TimedOut,
    /// The statement charged more memory than its limit (`memory.rs`).
    StatementMemoryLimit,
    /// The statements of its class charged more than the class's limit.
    ClassMemoryLimit,
}

/// The payload a checkpoint unwinds with, and the error [`catch_cancelled`]
/// returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled {
    pub reason: CancelReason,
}

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reason {
            CancelReason::Cancelled => f.write_str("cancelled"),
            CancelReason::TimedOut => f.write_str("statement timeout"),
            CancelReason::StatementMemoryLimit => f.write_str("statement memory limit exceeded"),
            CancelReason::ClassMemoryLimit => f.write_str("workload class memory limit exceeded"),
        }
    }
}

impl std::error::Error for Cancelled {}

/// `state` values.
const RUNNING: u8 = 0;
const CANCELLED: u8 = 1;
const TIMED_OUT: u8 = 2;
const STATEMENT_MEMORY: u8 = 3;
const CLASS_MEMORY: u8 = 4;

fn state_of(reason: CancelReason) -> u8 {
    match reason {
        CancelReason::Cancelled => CANCELLED,
        CancelReason::TimedOut => TIMED_OUT,
        CancelReason::StatementMemoryLimit => STATEMENT_MEMORY,
        CancelReason::ClassMemoryLimit => CLASS_MEMORY,
    }
}

struct State {
    /// `RUNNING`, or the first reason it stopped (never changes after).
    state: AtomicU8,
    deadline: Option<Instant>,
    /// The statement's memory account (`memory.rs`); `None`: charges are
    /// not counted.
    memory: Option<StatementMemory>,
}

/// A shared flag (and an optional deadline) that stops work at its next
/// checkpoint. Cheap to clone; clones share the flag.
#[derive(Clone)]
pub struct CancelToken(Arc<State>);

impl CancelToken {
    /// A token that stops only when cancelled.
    pub fn new() -> CancelToken {
        CancelToken::for_statement(None, None)
    }

    /// A token that also stops once `timeout` has passed from now.
    pub fn with_timeout(timeout: Duration) -> CancelToken {
        CancelToken::for_statement(Some(timeout), None)
    }

    /// A statement's token: an optional timeout from now and an optional
    /// memory account that [`CancelToken::charge`] charges.
    pub fn for_statement(
        timeout: Option<Duration>,
        memory: Option<StatementMemory>,
    ) -> CancelToken {
        CancelToken(Arc::new(State {
            state: AtomicU8::new(RUNNING),
            // An overflowing deadline is as good as none.
            deadline: timeout.and_then(|t| Instant::now().checked_add(t)),
            memory,
        }))
    }

    /// Stops the work at its next checkpoint. Idempotent; a token that timed
    /// out stays timed out.
    pub fn cancel(&self) {
        self.stop(CancelReason::Cancelled);
    }

    /// Records `reason` unless the token already stopped for another.
    fn stop(&self, reason: CancelReason) {
        // Relaxed: a flag, not a synchronization — the work needs to see it
        // eventually, and nothing is published through it.
        let _ = self.0.state.compare_exchange(
            RUNNING,
            state_of(reason),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Charges `bytes` the statement allocated to its memory account (a no-op
    /// without one). Exceeding the statement's or its class's limit stops the
    /// token — every checkpoint of the statement then unwinds — and returns
    /// the reason, so the caller can stop at once.
    pub fn charge(&self, bytes: u64) -> Result<(), Cancelled> {
        let Some(memory) = &self.0.memory else {
            return Ok(());
        };
        match memory.charge(bytes) {
            None => Ok(()),
            Some(reason) => {
                self.stop(reason);
                Err(Cancelled {
                    reason: self.reason().unwrap_or(reason),
                })
            }
        }
    }

    /// The statement's memory account, if it has one.
    pub fn memory(&self) -> Option<&StatementMemory> {
        self.0.memory.as_ref()
    }

    /// Why the work must stop, if it must. Records a passed deadline, so the
    /// reason never changes once observed.
    pub fn reason(&self) -> Option<CancelReason> {
        match self.0.state.load(Ordering::Relaxed) {
            RUNNING => {}
            CANCELLED => return Some(CancelReason::Cancelled),
            TIMED_OUT => return Some(CancelReason::TimedOut),
            STATEMENT_MEMORY => return Some(CancelReason::StatementMemoryLimit),
            CLASS_MEMORY => return Some(CancelReason::ClassMemoryLimit),
            other => panic!("cancel token state {other} is not a state"),
        }
        let deadline = self.0.deadline?;
        if Instant::now() < deadline {
            return None;
        }
        match self.0.state.compare_exchange(
            RUNNING,
            TIMED_OUT,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => Some(CancelReason::TimedOut),
            // Cancelled meanwhile: the first reason stays.
            Err(_) => self.reason(),
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.reason().is_some()
    }

    /// Unwinds with [`Cancelled`] if the work must stop; else returns.
    pub fn checkpoint(&self) {
        if let Some(reason) = self.reason() {
            std::panic::resume_unwind(Box::new(Cancelled { reason }));
        }
    }
}

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken::new()
    }
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("reason", &self.reason())
            .field("deadline", &self.0.deadline)
            .finish()
    }
}

/// Runs `f`; a [`Cancelled`] unwinding out of it (from a checkpoint here or in
/// any task it waited for) becomes `Err`. Any other panic goes on unwinding.
pub fn catch_cancelled<R>(f: impl FnOnce() -> R) -> Result<R, Cancelled> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => Ok(r),
        Err(payload) => match payload.downcast::<Cancelled>() {
            Ok(c) => Err(*c),
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_stops_only_when_cancelled_and_keeps_its_first_reason() {
        let t = CancelToken::new();
        assert_eq!(t.reason(), None);
        assert_eq!(catch_cancelled(|| t.checkpoint()), Ok(()));
        t.clone().cancel();
        assert_eq!(t.reason(), Some(CancelReason::Cancelled));
        assert_eq!(
            catch_cancelled(|| t.checkpoint()),
            Err(Cancelled {
                reason: CancelReason::Cancelled
            })
        );
    }

    #[test]
    fn a_passed_deadline_is_a_timeout_that_a_later_cancel_does_not_change() {
        let t = CancelToken::with_timeout(Duration::ZERO);
        assert_eq!(t.reason(), Some(CancelReason::TimedOut));
        t.cancel();
        assert_eq!(t.reason(), Some(CancelReason::TimedOut));
        let far = CancelToken::with_timeout(Duration::from_secs(3600));
        assert_eq!(far.reason(), None);
        let never = CancelToken::with_timeout(Duration::MAX);
        assert_eq!(never.reason(), None, "an overflowing deadline is none");
    }

    #[test]
    fn a_charge_over_the_limit_stops_the_token_with_the_memory_reason() {
        let t = CancelToken::for_statement(None, Some(StatementMemory::new(Some(100), None)));
        assert_eq!(t.charge(60), Ok(()));
        assert_eq!(t.reason(), None);
        let over = Err(Cancelled {
            reason: CancelReason::StatementMemoryLimit,
        });
        assert_eq!(t.charge(60), over);
        assert_eq!(catch_cancelled(|| t.checkpoint()), over);
        assert_eq!(t.memory().unwrap().used_bytes(), 120);
        // Without an account, charges are free.
        assert_eq!(CancelToken::new().charge(1 << 40), Ok(()));
    }

    #[test]
    fn other_panics_pass_through_catch_cancelled() {
        let r = std::panic::catch_unwind(|| catch_cancelled(|| panic!("a real bug")));
        let payload = r.expect_err("the panic goes on unwinding");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"a real bug"));
    }
}
