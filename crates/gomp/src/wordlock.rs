//! Locks that live in memory the C program owns: `omp_lock_t` (4 bytes),
//! `omp_nest_lock_t` (16 bytes), and the 8-byte `.gomp_critical_user_NAME` slots
//! GCC emits for named `critical` sections. None of them has room for a
//! scheduler-aware mutex, so the word holds the lock state (0 free, 1 locked,
//! 2 locked with sleepers) and sleepers wait on the scheduler's `Mutex`/`Condvar`
//! of a bucket chosen by the word's address — a futex built from scheduler-aware
//! primitives, so a task waiting for a lock counts as *blocked*.
//!
//! No lost wake-up: a sleeper sets the word to 2 while holding its bucket's mutex
//! and keeps holding it until the condvar wait has registered; an unlocker that
//! sees 2 takes the same mutex before notifying, hence after the registration.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use maestro_scheduler::sync::{Condvar, Mutex};

const FREE: u32 = 0;
const LOCKED: u32 = 1;
const CONTENDED: u32 = 2;

struct Bucket {
    mutex: Mutex<()>,
    cv: Condvar,
}

const BUCKETS: usize = 64;

static TABLE: [Bucket; BUCKETS] = [const {
    Bucket {
        mutex: Mutex::new(()),
        cv: Condvar::new(),
    }
}; BUCKETS];

fn bucket(word: &AtomicU32) -> &'static Bucket {
    let addr = word as *const AtomicU32 as usize;
    // Fibonacci hashing of the address; locks are at least 4-byte aligned.
    let h = (addr >> 2).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    &TABLE[h >> (usize::BITS - BUCKETS.trailing_zeros())]
}

/// A lock in a word the caller owns.
pub(crate) fn lock(word: &AtomicU32) {
    if word
        .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
    {
        return;
    }
    // Short critical sections are common (`critical`, `atomic`): retry a little
    // before sleeping.
    for _ in 0..64 {
        std::hint::spin_loop();
        if word.load(Ordering::Relaxed) == FREE
            && word
                .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
    }
    let b = bucket(word);
    let mut g = b.mutex.lock();
    // Acquiring with CONTENDED may cost one needless notify later; never a miss.
    while word.swap(CONTENDED, Ordering::Acquire) != FREE {
        b.cv.wait(&mut g);
    }
}

pub(crate) fn try_lock(word: &AtomicU32) -> bool {
    word.compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

pub(crate) fn unlock(word: &AtomicU32) {
    if word.swap(FREE, Ordering::Release) == CONTENDED {
        let b = bucket(word);
        let g = b.mutex.lock();
        drop(g);
        // Several words share a bucket: wake all, each re-checks its own word.
        b.cv.notify_all();
    }
}

/// `omp_nest_lock_t`: the lock word, a count, and the owning task.
#[repr(C)]
pub(crate) struct NestLock {
    word: AtomicU32,
    count: AtomicU32,
    owner: AtomicUsize,
}

impl NestLock {
    pub fn init(&self) {
        self.word.store(FREE, Ordering::Relaxed);
        self.count.store(0, Ordering::Relaxed);
        self.owner.store(0, Ordering::Relaxed);
    }

    /// Locks for `me` (a task's identity); returns the new nesting count.
    pub fn lock(&self, me: usize) -> u32 {
        if self.owner.load(Ordering::Relaxed) != me {
            lock(&self.word);
            self.owner.store(me, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Returns the new nesting count, or 0 if another task holds the lock.
    pub fn try_lock(&self, me: usize) -> u32 {
        if self.owner.load(Ordering::Relaxed) != me {
            if !try_lock(&self.word) {
                return 0;
            }
            self.owner.store(me, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub fn unlock(&self) {
        if self.count.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.owner.store(0, Ordering::Relaxed);
            unlock(&self.word);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn word_lock_excludes() {
        let word = Arc::new(AtomicU32::new(0));
        let counter = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (word, counter) = (word.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        lock(&word);
                        // A non-atomic read-modify-write split in two: lost updates
                        // would show if two threads were inside at once.
                        let v = counter.load(Ordering::Relaxed);
                        std::thread::yield_now();
                        counter.store(v + 1, Ordering::Relaxed);
                        unlock(&word);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::Relaxed), 8000);
        assert!(try_lock(&word));
        assert!(!try_lock(&word));
        unlock(&word);
    }

    #[test]
    fn nest_lock_counts_per_owner() {
        let l = NestLock {
            word: AtomicU32::new(0),
            count: AtomicU32::new(0),
            owner: AtomicUsize::new(0),
        };
        l.init();
        assert_eq!(l.lock(7), 1);
        assert_eq!(l.try_lock(7), 2);
        assert_eq!(l.try_lock(8), 0);
        l.unlock();
        l.unlock();
        assert_eq!(l.try_lock(8), 1);
        l.unlock();
    }
}
