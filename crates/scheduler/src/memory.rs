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
//! **Reservations.** A statement does not add every charge to its class's
//! pool: the pool's counters are shared by every statement of the class, and
//! a locked add on them per charge made the cache line bounce between cores
//! (`examples/memory_charge.rs`: ~110–200 ns a charge on two threads against
//! ~10 ns on one). Instead a statement *reserves* from the pool: when its
//! charges pass what it reserved, it reserves up to its charges plus
//! `min(charges, RESERVATION_AHEAD_MAX_BYTES)` in one add. So the pool
//! counts what its statements were granted — at most `min(charge, 64 KiB)`
//! more than they charged, each — and a statement touches the shared line
//! about once per 64 KiB. A class *with* a memory limit reserves nothing
//! ahead (its grants are its charges), so its limit and its usage stay exact;
//! the class limit check subtracts the charging statement's own unused
//! reservation, so only other statements' slack (≤ 64 KiB each) can stop a
//! statement early — after `set_limit` on a class that had none.
//!
//! Orderings: counters only (`Relaxed`): a limit check may let a racing
//! charge through by one charge's size, which the limit's unit (bytes of
//! whole operators) makes irrelevant. Concurrent charges of one statement
//! race on its `reserved_bytes` with a compare-exchange: the one that moves
//! it adds exactly the difference to the pool, so the pool holds the sum of
//! the statements' reservations (the drop subtracts each one's).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cancel::CancelReason;

/// How far a statement of a class without a memory limit reserves ahead of
/// its charges (and never more than it has charged): guessed — a hash table
/// or an intermediate vector of a few thousand rows; the measured point is
/// that the pool's line is then touched rarely, not this value.
pub const RESERVATION_AHEAD_MAX_BYTES: u64 = 64 << 10;

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

    /// Bytes the class's running statements hold: their charges, rounded
    /// up by reservations when the class has no limit (module comment).
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes.load(Ordering::Relaxed)
    }

    /// The most `used_bytes` has been.
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes.load(Ordering::Relaxed)
    }
}

/// One statement's account: its limit, its charges, what it reserved from
/// its class's pool, the pool.
#[derive(Debug, Default)]
pub struct StatementMemory {
    limit_bytes: Option<u64>,
    used_bytes: AtomicU64,
    /// Added to the pool; ≥ `used_bytes` once a charge returned.
    reserved_bytes: AtomicU64,
    pool: Option<Arc<MemoryPool>>,
}

impl StatementMemory {
    /// An account with at most `limit_bytes` (`None`: no statement limit)
    /// drawing from `pool` (`None`: no class accounting).
    pub fn new(limit_bytes: Option<u64>, pool: Option<Arc<MemoryPool>>) -> StatementMemory {
        StatementMemory {
            limit_bytes,
            used_bytes: AtomicU64::new(0),
            reserved_bytes: AtomicU64::new(0),
            pool,
        }
    }

    pub fn limit_bytes(&self) -> Option<u64> {
        self.limit_bytes
    }

    pub fn used_bytes(&self) -> u64 {
        self.used_bytes.load(Ordering::Relaxed)
    }

    /// What the statement holds from its class's pool (its charges, plus
    /// the reservation ahead of them in a class without a limit).
    pub fn reserved_bytes(&self) -> u64 {
        self.reserved_bytes.load(Ordering::Relaxed)
    }

    /// Adds `bytes`; the reason to stop if a limit is now exceeded.
    pub(crate) fn charge(&self, bytes: u64) -> Option<CancelReason> {
        let used = self
            .used_bytes
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        let over = self
            .limit_bytes
            .is_some_and(|limit| used > limit)
            .then_some(CancelReason::StatementMemoryLimit);
        match &self.pool {
            Some(pool) => over.or(self.reserve(pool, used)),
            None => over,
        }
    }

    /// Makes the reservation cover `used` (see the module comment); the
    /// class limit's reason if this reservation takes the class over it.
    fn reserve(&self, pool: &MemoryPool, used: u64) -> Option<CancelReason> {
        let limit = pool.limit_bytes();
        let mut reserved = self.reserved_bytes.load(Ordering::Relaxed);
        while used > reserved {
            let target = match limit {
                Some(_) => used,
                None => used.saturating_add(used.min(RESERVATION_AHEAD_MAX_BYTES)),
            };
            match self.reserved_bytes.compare_exchange_weak(
                reserved,
                target,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    let grant = target - reserved;
                    let class_used = pool
                        .used_bytes
                        .fetch_add(grant, Ordering::Relaxed)
                        .saturating_add(grant);
                    // A read first: `fetch_max` is a locked read-modify-write
                    // even when the peak stands.
                    if class_used > pool.peak_bytes.load(Ordering::Relaxed) {
                        pool.peak_bytes.fetch_max(class_used, Ordering::Relaxed);
                    }
                    // This statement's own slack is not use.
                    let charged = class_used - (target - used);
                    return limit
                        .is_some_and(|limit| charged > limit)
                        .then_some(CancelReason::ClassMemoryLimit);
                }
                // Another charge of this statement moved it: cover the rest.
                Err(now) => reserved = now,
            }
        }
        None
    }
}

impl Drop for StatementMemory {
    /// The statement ended: its charges leave the class pool.
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            pool.used_bytes
                .fetch_sub(*self.reserved_bytes.get_mut(), Ordering::Relaxed);
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

    #[test]
    fn without_a_class_limit_statements_reserve_ahead_and_return_it_all() {
        const AHEAD: u64 = RESERVATION_AHEAD_MAX_BYTES;
        let pool = MemoryPool::new(None);
        let a = StatementMemory::new(None, Some(pool.clone()));
        assert_eq!(a.charge(100), None);
        // Ahead by as much as charged: 200 held for 100 charged.
        assert_eq!((pool.used_bytes(), a.reserved_bytes()), (200, 200));
        assert_eq!(a.charge(50), None);
        assert_eq!(pool.used_bytes(), 200, "covered by the reservation");
        assert_eq!(a.charge(1 << 20), None);
        let used = 150 + (1 << 20);
        assert_eq!(a.reserved_bytes(), used + AHEAD, "ahead by at most {AHEAD}");
        assert_eq!(pool.used_bytes(), used + AHEAD);
        assert_eq!(pool.peak_bytes(), used + AHEAD);
        // A limit set now counts other statements' slack, never the
        // charging statement's own.
        pool.set_limit(Some(used + 10));
        let b = StatementMemory::new(None, Some(pool.clone()));
        assert_eq!(b.charge(5), Some(CancelReason::ClassMemoryLimit));
        assert_eq!(a.charge(5), None, "a's own reservation covers it");
        drop((a, b));
        assert_eq!(pool.used_bytes(), 0);
    }

    /// Seeded: threads charge statements of one class concurrently (some
    /// statements shared by threads); the pool must hold exactly the sum of
    /// the reservations, each within its bound of its charges, and nothing
    /// once the statements end.
    #[test]
    fn concurrent_charges_keep_the_pool_equal_to_the_reservations() {
        let seed = 0x5eed_u64;
        for limited in [false, true] {
            let pool = MemoryPool::new(limited.then_some(u64::MAX / 2));
            let statements: Vec<StatementMemory> = (0..3)
                .map(|_| StatementMemory::new(None, Some(pool.clone())))
                .collect();
            std::thread::scope(|s| {
                for t in 0..4u64 {
                    let (statements, seed) = (&statements, seed + t);
                    s.spawn(move || {
                        let mut x = seed;
                        for _ in 0..20_000 {
                            // xorshift: sizes from 1 byte to ~64 KiB.
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            let st = &statements[(x % 3) as usize];
                            assert_eq!(st.charge(1 + (x >> 48)), None, "seed {seed}");
                        }
                    });
                }
            });
            let reserved: u64 = statements.iter().map(|m| m.reserved_bytes()).sum();
            assert_eq!(
                pool.used_bytes(),
                reserved,
                "seed {seed}, limited {limited}"
            );
            for m in &statements {
                let (used, held) = (m.used_bytes(), m.reserved_bytes());
                let ahead = if limited {
                    0
                } else {
                    used.min(RESERVATION_AHEAD_MAX_BYTES)
                };
                assert!(
                    used <= held && held <= used + ahead,
                    "seed {seed}, limited {limited}: {used} charged, {held} held"
                );
            }
            drop(statements);
            assert_eq!(pool.used_bytes(), 0, "seed {seed}, limited {limited}");
        }
    }
}
