//! A manual-reset event: `set` releases every waiter until `reset`.

use std::time::{Duration, Instant};

use super::{Condvar, Mutex};

#[derive(Default)]
pub struct Event {
    set: Mutex<bool>,
    cv: Condvar,
}

impl Event {
    pub const fn new() -> Self {
        Event {
            set: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    pub fn set(&self) {
        *self.set.lock() = true;
        self.cv.notify_all();
    }

    pub fn reset(&self) {
        *self.set.lock() = false;
    }

    pub fn is_set(&self) -> bool {
        *self.set.lock()
    }

    /// Waits (as *blocked*) until the event is set.
    pub fn wait(&self) {
        let mut s = self.set.lock();
        self.cv.wait_while(&mut s, |s| !*s);
    }

    /// Returns whether the event was set within `timeout`.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut s = self.set.lock();
        while !*s {
            if self.cv.wait_until(&mut s, deadline).timed_out() {
                return *s;
            }
        }
        true
    }
}
