//! Loop scheduling over a normalized iteration space. GCC hands us `start`, `end`
//! and `incr` as `long` or as `unsigned long long` with a direction; we count the
//! iterations once and hand out index ranges `[a, b)`, mapped back to loop values
//! with wrapping arithmetic on the 64-bit patterns (which is exact for both
//! signedness conventions). The last chunk ends at `end` itself so that
//! `start + count·incr` never has to be representable.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::{Backoff, CachePadded};

use maestro_scheduler::sync::{Condvar, Mutex};

use crate::ctx::Ctx;
use crate::icv::Sched;

/// An iteration space: values `start + i·incr` for `i` in `0..count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Space {
    start: u64,
    incr: u64,
    end: u64,
    pub count: u64,
}

impl Space {
    /// A `long` loop `for (v = start; v <cmp> end; v += incr)`.
    pub fn long(start: i64, end: i64, incr: i64) -> Space {
        let (s, e, i) = (i128::from(start), i128::from(end), i128::from(incr));
        let count = if i > 0 && s < e {
            (e - s + i - 1) / i
        } else if i < 0 && s > e {
            (s - e - i - 1) / -i
        } else {
            0
        };
        Space {
            start: start as u64,
            incr: incr as u64,
            end: end as u64,
            count: count as u64,
        }
    }

    /// An `unsigned long long` loop; `up` tells the direction (`incr` is then a
    /// negative step in two's complement).
    pub fn ull(up: bool, start: u64, end: u64, incr: u64) -> Space {
        let count = if up && start < end && incr > 0 {
            u128::from(end - start).div_ceil(u128::from(incr)) as u64
        } else if !up && start > end && incr != 0 {
            let step = u128::from(incr.wrapping_neg());
            u128::from(start - end).div_ceil(step) as u64
        } else {
            0
        };
        Space {
            start,
            incr,
            end,
            count,
        }
    }

    /// A plain range of indices (sections, the native API).
    pub fn indices(count: u64) -> Space {
        Space {
            start: 0,
            incr: 1,
            end: count,
            count,
        }
    }

    /// The loop values bounding the index range `[a, b)`.
    pub fn bounds(&self, (a, b): (u64, u64)) -> (u64, u64) {
        let at = |i: u64| {
            if i >= self.count {
                self.end
            } else {
                self.start.wrapping_add(i.wrapping_mul(self.incr))
            }
        };
        (at(a), at(b))
    }
}

/// A loop construct shared by a team.
pub(crate) struct LoopWs {
    pub space: Space,
    sched: Sched,
    /// Iterations per chunk (0 = unspecified, only for static).
    chunk: u64,
    nthreads: u64,
    /// The dynamic/guided cursor, alone on its cache line: every claim writes
    /// it, and the fields above are read by every member on every claim.
    next: CachePadded<AtomicU64>,
    ordered: Option<Ordered>,
}

impl LoopWs {
    /// `sched` must already be resolved (no `runtime`); `Auto` means static.
    pub fn new(space: Space, sched: Sched, chunk: u64, nthreads: usize, ordered: bool) -> LoopWs {
        let sched = if sched == Sched::Auto {
            Sched::Static
        } else {
            sched
        };
        let chunk = match sched {
            Sched::Static => chunk,
            _ => chunk.max(1),
        };
        LoopWs {
            space,
            sched,
            chunk,
            nthreads: nthreads as u64,
            next: CachePadded::new(AtomicU64::new(0)),
            ordered: ordered.then(Ordered::new),
        }
    }

    /// The calling member's next chunk of indices, or None when it has no more.
    /// In an ordered loop, the previous chunk's `ordered` turn is handed on first.
    pub fn next_chunk(&self, ctx: &Ctx) -> Option<(u64, u64)> {
        if let (Some(o), Some(c)) = (&self.ordered, ctx.ws.chunk.take()) {
            o.release(c);
        }
        let chunk = match self.sched {
            Sched::Static | Sched::Auto => {
                let trip = ctx.ws.trip.get();
                ctx.ws.trip.set(trip + 1);
                static_chunk(
                    self.space.count,
                    self.nthreads,
                    ctx.num as u64,
                    self.chunk,
                    trip,
                )
            }
            Sched::Dynamic => self.claim_fixed(),
            Sched::Guided => {
                self.claim(|remaining| remaining.div_ceil(self.nthreads).max(self.chunk))
            }
        };
        if self.ordered.is_some() {
            ctx.ws.chunk.set(chunk);
        }
        chunk
    }

    /// Takes the next `chunk` indices (dynamic schedule): one `fetch_add`, as
    /// libgomp does, instead of a compare-and-swap loop that members retry
    /// against each other. The cursor may then pass `count` by at most one
    /// chunk per member; where that could overflow, the CAS loop is used.
    fn claim_fixed(&self) -> Option<(u64, u64)> {
        let count = self.space.count;
        let chunk = self.chunk;
        let headroom = chunk.checked_mul(self.nthreads.saturating_add(1));
        if headroom.and_then(|h| count.checked_add(h)).is_none() {
            return self.claim(|_| chunk);
        }
        // Relaxed: the cursor only partitions indices; the loop's data is
        // published by the barrier at its end, not through it.
        let a = self.next.fetch_add(chunk, Ordering::Relaxed);
        (a < count).then(|| (a, a.saturating_add(chunk).min(count)))
    }

    /// Takes the next `size(remaining)` indices from the shared cursor.
    fn claim(&self, size: impl Fn(u64) -> u64) -> Option<(u64, u64)> {
        let count = self.space.count;
        let mut a = self.next.load(Ordering::Relaxed);
        loop {
            if a >= count {
                return None;
            }
            let b = a.saturating_add(size(count - a)).min(count);
            match self
                .next
                .compare_exchange_weak(a, b, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some((a, b)),
                Err(x) => a = x,
            }
        }
    }

    /// Waits until the chunk starting at `start` has the `ordered` turn:
    /// first briefly on the published turn (spinning, then yielding the core —
    /// crossbeam's `Backoff`, about ten rounds), then asleep on the condvar as
    /// a *blocked* member. Turns usually pass between running members within
    /// microseconds, and a sleep plus a wake-up per ordered iteration cost
    /// ~30 µs (measured, `bench omp --parts overhead`, before this path).
    pub fn ordered_wait(&self, start: u64) {
        if let Some(o) = &self.ordered {
            let backoff = Backoff::new();
            while !backoff.is_completed() {
                // Acquire: pairs with the Release store in `Ordered::release`,
                // so the previous chunk's ordered writes are visible here.
                if o.turn.load(Ordering::Acquire) == start {
                    return;
                }
                backoff.snooze();
            }
            let mut s = o.state.lock();
            s.sleepers += 1;
            o.cv.wait_while(&mut s, |s| s.next != start);
            s.sleepers -= 1;
        }
    }

    pub fn release_ordered(&self, chunk: (u64, u64)) {
        if let Some(o) = &self.ordered {
            o.release(chunk);
        }
    }
}

/// Chunk number `trip` of member `num` under a static schedule.
fn static_chunk(count: u64, n: u64, num: u64, chunk: u64, trip: u64) -> Option<(u64, u64)> {
    if chunk == 0 {
        // One contiguous block per member, the first `count % n` one longer.
        if trip > 0 {
            return None;
        }
        let (q, r) = (count / n, count % n);
        let (a, len) = if num < r {
            (num * (q + 1), q + 1)
        } else {
            (r * (q + 1) + (num - r) * q, q)
        };
        return (len > 0).then_some((a, a + len));
    }
    let c = u128::from(trip) * u128::from(n) + u128::from(num);
    let a = c * u128::from(chunk);
    if a >= u128::from(count) {
        return None;
    }
    let b = (a + u128::from(chunk)).min(u128::from(count));
    Some((a as u64, b as u64))
}

/// The `ordered` turn: chunks partition `0..count` and are handed out in index
/// order, so "every index below `next` is done" is the turn. A chunk finished out
/// of turn waits in `done` until the turn reaches it.
///
/// The turn changes only under `state`'s mutex, and is then published in
/// `turn` (Release) for waiters that spin before they sleep. Sleepers count
/// themselves under the mutex, so a release that sees no sleeper skips the
/// notification: a waiter that counts itself afterwards does so under the
/// mutex, after the new turn, and does not sleep if the turn is its own.
struct Ordered {
    state: Mutex<OrderedState>,
    cv: Condvar,
    /// `state.next`, readable without the mutex.
    turn: AtomicU64,
}

struct OrderedState {
    next: u64,
    done: BTreeMap<u64, u64>,
    /// Members asleep on `cv`.
    sleepers: usize,
}

impl Ordered {
    fn new() -> Ordered {
        Ordered {
            state: Mutex::new(OrderedState {
                next: 0,
                done: BTreeMap::new(),
                sleepers: 0,
            }),
            cv: Condvar::new(),
            turn: AtomicU64::new(0),
        }
    }

    fn release(&self, (a, b): (u64, u64)) {
        let mut s = self.state.lock();
        if s.next != a {
            s.done.insert(a, b);
            return;
        }
        s.next = b;
        loop {
            let k = s.next;
            match s.done.remove(&k) {
                Some(e) => s.next = e,
                None => break,
            }
        }
        // Release: pairs with the Acquire load in `LoopWs::ordered_wait`.
        self.turn.store(s.next, Ordering::Release);
        let wake = s.sleepers > 0;
        drop(s);
        if wake {
            self.cv.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_count_and_map() {
        let s = Space::long(0, 10, 3);
        assert_eq!(s.count, 4);
        assert_eq!(s.bounds((0, 2)), (0, 6));
        assert_eq!(s.bounds((2, 4)), (6, 10));
        let s = Space::long(10, -1, -2);
        assert_eq!(s.count, 6);
        assert_eq!(s.bounds((1, 6)).0 as i64, 8);
        assert_eq!(s.bounds((1, 6)).1 as i64, -1);
        assert_eq!(Space::long(5, 5, 1).count, 0);
        assert_eq!(Space::long(5, 0, 1).count, 0);
        let s = Space::long(i64::MIN, i64::MAX, i64::MAX);
        assert_eq!(s.count, 3);
        let s = Space::ull(true, 0, u64::MAX, 1 << 62);
        assert_eq!(s.count, 4);
        let s = Space::ull(false, 100, 0, 7u64.wrapping_neg());
        assert_eq!(s.count, 15);
        assert_eq!(s.bounds((1, 2)), (93, 86));
        assert_eq!(Space::ull(false, 0, 100, 1u64.wrapping_neg()).count, 0);
    }

    #[test]
    fn static_blocks_partition_the_space() {
        for (count, n, chunk) in [(10, 3, 0), (2, 4, 0), (100, 7, 3), (5, 2, 10), (0, 3, 1)] {
            let mut seen = vec![0u32; count as usize];
            for num in 0..n {
                for trip in 0.. {
                    let Some((a, b)) = static_chunk(count, n, num, chunk, trip) else {
                        break;
                    };
                    assert!(a < b && b <= count);
                    for i in a..b {
                        seen[i as usize] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "{count} {n} {chunk}");
        }
    }

    #[test]
    fn ordered_turn_advances_through_out_of_order_releases() {
        let o = Ordered::new();
        o.release((2, 5));
        o.release((5, 6));
        assert_eq!(o.state.lock().next, 0);
        o.release((0, 2));
        assert_eq!(o.state.lock().next, 6);
        assert!(o.state.lock().done.is_empty());
    }
}
