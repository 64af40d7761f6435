//! The commit-timestamp oracle.
//!
//! `visible` is the newest commit timestamp whose transaction has installed
//! all its versions. Commits take the short `commit_lock`, draw
//! `visible + 1`, install (one store into the transaction's state, see
//! `version::TxnState`), and only then publish the timestamp in `visible`.
//! A snapshot reads `visible`, so every transaction with a commit timestamp
//! at or below a snapshot's read timestamp had finished installing before the
//! snapshot began: a reader never sees part of a transaction.
//!
//! The lock covers a handful of stores per commit and, with a redo log, the
//! copy of the commit's record into the log buffer (so the log is in
//! timestamp order); the write and sync happen after it (group commit).

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// A commit timestamp, or a snapshot's read timestamp. Timestamp 0 is the
/// empty database: no transaction commits at 0.
pub type Timestamp = u64;

pub(crate) struct Clock {
    visible: AtomicU64,
    commit_lock: Mutex<()>,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Clock {
            visible: AtomicU64::new(0),
            commit_lock: Mutex::new(()),
        }
    }

    /// The newest fully installed commit timestamp.
    pub(crate) fn visible(&self) -> Timestamp {
        // SeqCst: pairs with the SeqCst store in `commit`; also part of the
        // single total order the snapshot registry's argument relies on
        // (`snapshot::Registry::acquire` and `Registry::horizon`).
        self.visible.load(Ordering::SeqCst)
    }

    /// Recovery: continues the clock after `ts`, the newest recovered
    /// commit timestamp (the database has committed nothing yet).
    pub(crate) fn recover(&self, ts: Timestamp) {
        let _serial = self.commit_lock.lock();
        // Relaxed: only written under `commit_lock`, which we hold.
        let visible = self.visible.load(Ordering::Relaxed);
        assert_eq!(visible, 0, "recovery into a clock at {visible}");
        // SeqCst: as in `commit`.
        self.visible.store(ts, Ordering::SeqCst);
    }

    /// Runs `install(ts)` with the next commit timestamp under the commit lock
    /// and publishes `ts` if it succeeds. `install` may refuse (validation
    /// failed); the timestamp is then not used.
    pub(crate) fn commit<E>(
        &self,
        install: impl FnOnce(Timestamp) -> Result<(), E>,
    ) -> Result<Timestamp, E> {
        let _serial = self.commit_lock.lock();
        // Relaxed: `visible` is only written under `commit_lock`, which we hold.
        let ts = self.visible.load(Ordering::Relaxed) + 1;
        install(ts)?;
        // SeqCst: pairs with the SeqCst loads in `visible()` (snapshot begin,
        // GC horizon): whoever reads `ts` here also sees every store `install`
        // made (the transaction's commit timestamp).
        self.visible.store(ts, Ordering::SeqCst);
        Ok(ts)
    }
}
