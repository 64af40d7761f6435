//! A transaction attempt's locks as a guard: it acquires through the lock
//! manager, remembers every new lock, and releases whatever it still holds
//! when dropped — so a transaction that panics (or returns early by any path)
//! frees its locks without relying on a convention.

use maestro_scheduler::CancelToken;

use super::{Deadlock, Grant, LockManager, LockMode, LockName, TxnTs, WaitError};

/// The locks of one transaction attempt (see the module docs).
pub struct LockSet<'a> {
    manager: &'a LockManager,
    ts: TxnTs,
    /// Locks to release; a buffer the caller lends so that a terminal
    /// allocates nothing per transaction once warm.
    held: &'a mut Vec<LockName>,
}

impl<'a> LockSet<'a> {
    /// An empty lock set for attempt `ts`; `held` must be empty (a previous
    /// set released everything it recorded there).
    pub fn new(manager: &'a LockManager, ts: TxnTs, held: &'a mut Vec<LockName>) -> Self {
        assert!(held.is_empty(), "a lock set starts holding nothing");
        LockSet { manager, ts, held }
    }

    pub fn ts(&self) -> TxnTs {
        self.ts
    }

    /// Acquires `name` in `mode` (waiting if needed) until released; a
    /// [`Deadlock`] means this attempt must roll back.
    pub fn acquire(&mut self, name: LockName, mode: LockMode) -> Result<Grant, Deadlock> {
        let grant = self.manager.acquire(self.ts, name, mode)?;
        if grant == Grant::Acquired {
            self.held.push(name);
        }
        Ok(grant)
    }

    /// [`acquire`](Self::acquire) that gives up when `cancel` says so
    /// ([`LockManager::acquire_cancellable`]).
    pub fn acquire_cancellable(
        &mut self,
        name: LockName,
        mode: LockMode,
        cancel: &CancelToken,
    ) -> Result<Grant, WaitError> {
        let grant = self
            .manager
            .acquire_cancellable(self.ts, name, mode, cancel)?;
        if grant == Grant::Acquired {
            self.held.push(name);
        }
        Ok(grant)
    }

    /// The locks held (each once, in acquisition order).
    pub fn held(&self) -> &[LockName] {
        self.held
    }

    /// Releases every lock (at commit or after rollback).
    pub fn release_all(&mut self) {
        for name in self.held.drain(..) {
            let released = self.manager.release(self.ts, name);
            debug_assert!(released, "{name:?} was recorded as held");
        }
    }
}

impl Drop for LockSet<'_> {
    fn drop(&mut self) {
        self.release_all();
    }
}
