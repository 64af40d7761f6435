//! Memory accounting of statements and workload classes (issue 13, part 3;
//! HANA's statement and workload-class memory limits, SQL Server's request
//! memory grants).
//!
//! Operators *charge* what they allocate for a statement — hash tables,
//! intermediate vectors, sort buffers — to the statement's [`CancelToken`]
//! (`CancelToken::charge`). The charges accumulate in the statement's
//! [`StatementMemory`] and in its class's [`MemoryPool`]. A charge that takes
//! the statement above its limit, or the class's running statements above the
//! class's limit, cancels the statement with
//! [`CancelReason::StatementMemoryLimit`] or
//! [`CancelReason::ClassMemoryLimit`]: it stops at its next checkpoint and
//! unwinds as any cancelled statement does, dropping what it allocated.
//!
//! What a charge means: bytes allocated over the statement's life, not bytes
//! live now — operators charge when they allocate and nothing is released
//! before the statement ends (a grant consumed, as SQL Server's memory
//! grants). That over-counts a plan whose early intermediates die before its
//! end, never under-counts, and needs no wrapper around every vector. When
//! the statement ends (its last token clone is dropped) its whole charge
//! returns to the class pool.
//!
//! Orderings: counters only (`Relaxed`): a limit check may let a racing
//! charge through by one charge's size, which the limit's unit (bytes of
//! whole operators) makes irrelevant.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cancel::CancelReason;

/// A class's memory: what its running statements have charged, its peak, and
/// its limit (shared by the class table and every statement of the class).
#[derive(Debug, Default)]
pub struct MemoryPool {
    /// 0: no limit.
    limit_bytes: AtomicU64,
    used_bytes: AtomicU64,
    peak_bytes: AtomicU64,
}

impl MemoryPool {
    pub fn new(limit_bytes: Option<u64>) -> Arc<MemoryPool> {
        let pool = MemoryPool::default();
        pool.set_limit(limit_bytes);
        Arc::new(pool)
    }

    /// Changes the limit (classes can change at run time); statements over
    /// it are stopped at their next charge.
    pub fn set_limit(&self, limit_bytes: Option<u64>) {
        self.limit_bytes
            .store(limit_bytes.unwrap_or(0), Ordering::Relaxed);
    }

    pub fn limit_bytes(&self) -> Option<u64> {
        match self.limit_bytes.load(Ordering::Relaxed) {
            0 => None,
            limit => Some(limit),
        }
    }

    /// Bytes charged by the class's running statements.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes.load(Ordering::Relaxed)
    }

    /// The most `used_bytes` has been.
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes.load(Ordering::Relaxed)
    }
}

/// One statement's account: its limit, its charges, its class's pool.
#[derive(Debug, Default)]
pub struct StatementMemory {
    limit_bytes: Option<u64>,
    used_bytes: AtomicU64,
    pool: Option<Arc<MemoryPool>>,
}

impl StatementMemory {
    /// An account with at most `limit_bytes` (`None`: no statement limit)
    /// drawing from `pool` (`None`: no class accounting).
    pub fn new(limit_bytes: Option<u64>, pool: Option<Arc<MemoryPool>>) -> StatementMemory {
        StatementMemory {
            limit_bytes,
            used_bytes: AtomicU64::new(0),
            pool,
        }
    }

    pub fn limit_bytes(&self) -> Option<u64> {
        self.limit_bytes
    }

    pub fn used_bytes(&self) -> u64 {
        self.used_bytes.load(Ordering::Relaxed)
    }

    /// Adds `bytes`; the reason to stop if a limit is now exceeded.
    pub(crate) fn charge(&self, bytes: u64) -> Option<CancelReason> {
        let used = self
            .used_bytes
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        let mut over = self
            .limit_bytes
            .is_some_and(|limit| used > limit)
            .then_some(CancelReason::StatementMemoryLimit);
        if let Some(pool) = &self.pool {
            let class_used = pool
                .used_bytes
                .fetch_add(bytes, Ordering::Relaxed)
                .saturating_add(bytes);
            // A read first: `fetch_max` is a locked read-modify-write even
            // when the peak stands, and every charge of every statement of
            // the class would take the line exclusive.
            if class_used > pool.peak_bytes.load(Ordering::Relaxed) {
                pool.peak_bytes.fetch_max(class_used, Ordering::Relaxed);
            }
            if over.is_none() && pool.limit_bytes().is_some_and(|limit| class_used > limit) {
                over = Some(CancelReason::ClassMemoryLimit);
            }
        }
        over
    }
}

impl Drop for StatementMemory {
    /// The statement ended: its charges leave the class pool.
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            pool.used_bytes
                .fetch_sub(self.used_bytes.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_add_up_in_statement_and_class_and_leave_the_class_at_the_end() {
        let pool = MemoryPool::new(Some(1000));
        let a = StatementMemory::new(Some(600), Some(pool.clone()));
        let b = StatementMemory::new(None, Some(pool.clone()));
        assert_eq!(a.charge(500), None);
        assert_eq!(b.charge(300), None);
        assert_eq!((pool.used_bytes(), a.used_bytes()), (800, 500));
        assert_eq!(a.charge(200), Some(CancelReason::StatementMemoryLimit));
        assert_eq!(b.charge(100), Some(CancelReason::ClassMemoryLimit));
        assert_eq!(pool.peak_bytes(), 1100);
        drop(a);
        assert_eq!(pool.used_bytes(), 400);
        drop(b);
        assert_eq!(pool.used_bytes(), 0);
        assert_eq!(pool.peak_bytes(), 1100);
        pool.set_limit(None);
        assert_eq!(pool.limit_bytes(), None);
        let unlimited = StatementMemory::new(None, None);
        assert_eq!(unlimited.charge(1 << 40), None);
    }
}
