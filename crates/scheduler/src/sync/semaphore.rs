//! A counting semaphore on the scheduler-aware mutex and condvar.

use std::time::{Duration, Instant};

use super::{Condvar, Mutex};

pub struct Semaphore {
    permits: Mutex<usize>,
    cv: Condvar,
}

impl Semaphore {
    pub const fn new(permits: usize) -> Self {
        Semaphore {
            permits: Mutex::new(permits),
            cv: Condvar::new(),
        }
    }

    /// Takes one permit, waiting (as *blocked*) until one is free.
    pub fn acquire(&self) {
        let mut p = self.permits.lock();
        self.cv.wait_while(&mut p, |p| *p == 0);
        *p -= 1;
    }

    pub fn try_acquire(&self) -> bool {
        let mut p = self.permits.lock();
        if *p == 0 {
            return false;
        }
        *p -= 1;
        true
    }

    /// Takes one permit unless `timeout` passes first.
    pub fn acquire_timeout(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut p = self.permits.lock();
        while *p == 0 {
            if self.cv.wait_until(&mut p, deadline).timed_out() && *p == 0 {
                return false;
            }
        }
        *p -= 1;
        true
    }

    pub fn release(&self) {
        self.release_n(1);
    }

    pub fn release_n(&self, n: usize) {
        let mut p = self.permits.lock();
        *p += n;
        drop(p);
        if n == 1 {
            self.cv.notify_one();
        } else {
            self.cv.notify_all();
        }
    }

    /// Takes a permit and returns it when the guard drops.
    pub fn access(&self) -> SemaphorePermit<'_> {
        self.acquire();
        SemaphorePermit { sem: self }
    }

    pub fn available(&self) -> usize {
        *self.permits.lock()
    }
}

pub struct SemaphorePermit<'a> {
    sem: &'a Semaphore,
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.sem.release();
    }
}
