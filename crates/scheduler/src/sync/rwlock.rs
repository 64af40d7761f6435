//! A scheduler-aware reader-writer lock.
//!
//! State word: `WRITER` bit, `PARKED` bit, reader count in the remaining bits.
//! - Readers enter while no writer holds the lock; writers enter when the word has
//!   neither readers nor a writer.
//! - A thread that must wait sets `PARKED` and parks with the validation "still
//!   held the way that excludes me, and `PARKED` still set".
//! - The releasing writer, or the last reader when `PARKED` is set, clears the word's
//!   `PARKED` bit and unparks *all* waiters, who race again (and re-set `PARKED` if
//!   they must wait). Clearing happens before the unpark's bucket lock, and the
//!   waiters validate under that lock, so a waiter either sees the release or is
//!   woken by it.
//!
//! Readers may starve writers under a continuous stream of readers (documented,
//! not prevented: the engine's uses are short).

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::HeldLock;
use super::park::{LOCK_SPIN_ROUNDS, park_blocked, spin, unpark_all};

const WRITER: usize = 1;
const PARKED: usize = 2;
const READER: usize = 4;

pub struct RwLock<T: ?Sized> {
    state: AtomicUsize,
    data: UnsafeCell<T>,
}

// SAFETY: the lock gives `&mut T` to one writer or `&T` to many readers at a time,
// hence Send needs T: Send and Sync needs T: Send + Sync (the std bounds).
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

impl<T> RwLock<T> {
    pub const fn new(value: T) -> Self {
        RwLock {
            state: AtomicUsize::new(0),
            data: UnsafeCell::new(value),
        }
    }
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T: ?Sized> RwLock<T> {
    fn key(&self) -> usize {
        &self.state as *const AtomicUsize as usize
    }

    pub fn try_read(&self) -> Option<RwLockReadGuard<'_, T>> {
        let mut s = self.state.load(Ordering::Relaxed);
        while s & WRITER == 0 {
            // Acquire: pairs with the writer's Release swap in `unlock_write`.
            match self.state.compare_exchange_weak(
                s,
                s + READER,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Some(RwLockReadGuard {
                        lock: self,
                        _held: HeldLock::new(),
                    });
                }
                Err(x) => s = x,
            }
        }
        None
    }

    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        let mut round = 0;
        loop {
            if let Some(g) = self.try_read() {
                return g;
            }
            let s = self.state.load(Ordering::Relaxed);
            if s & WRITER == 0 {
                continue;
            }
            if round < LOCK_SPIN_ROUNDS {
                spin(round);
                round += 1;
                continue;
            }
            if s & PARKED == 0
                && self
                    .state
                    .compare_exchange_weak(s, s | PARKED, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            park_blocked(
                self.key(),
                || {
                    let s = self.state.load(Ordering::Relaxed);
                    s & WRITER != 0 && s & PARKED != 0
                },
                None,
            );
            round = 0;
        }
    }

    pub fn try_write(&self) -> Option<RwLockWriteGuard<'_, T>> {
        let mut s = self.state.load(Ordering::Relaxed);
        while s & !PARKED == 0 {
            // Acquire: pairs with the Release of the previous holder's unlock.
            match self.state.compare_exchange_weak(
                s,
                s | WRITER,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Some(RwLockWriteGuard {
                        lock: self,
                        _held: HeldLock::new(),
                    });
                }
                Err(x) => s = x,
            }
        }
        None
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        let mut round = 0;
        loop {
            if let Some(g) = self.try_write() {
                return g;
            }
            let s = self.state.load(Ordering::Relaxed);
            if s & !PARKED == 0 {
                continue;
            }
            if round < LOCK_SPIN_ROUNDS {
                spin(round);
                round += 1;
                continue;
            }
            if s & PARKED == 0
                && self
                    .state
                    .compare_exchange_weak(s, s | PARKED, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            park_blocked(
                self.key(),
                || {
                    let s = self.state.load(Ordering::Relaxed);
                    s & !PARKED != 0 && s & PARKED != 0
                },
                None,
            );
            round = 0;
        }
    }

    fn unlock_read(&self) {
        // Release: publishes the read section (for writers' Acquire).
        let before = self.state.fetch_sub(READER, Ordering::Release);
        debug_assert!(before >= READER, "read unlock without readers: {before:#x}");
        if before == READER | PARKED
            && self
                .state
                .compare_exchange(PARKED, 0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            unpark_all(self.key());
        }
    }

    fn unlock_write(&self) {
        // Release: publishes the write section to the next Acquire.
        let before = self.state.swap(0, Ordering::Release);
        debug_assert!(
            before & WRITER != 0,
            "write unlock without writer: {before:#x}"
        );
        if before & PARKED != 0 {
            unpark_all(self.key());
        }
    }

    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }
}

pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    /// Counts this guard for the thread (and keeps the guard `!Send`).
    _held: HeldLock,
}

// SAFETY: shares only `&T`.
unsafe impl<T: ?Sized + Sync> Sync for RwLockReadGuard<'_, T> {}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a read guard excludes writers, so no `&mut T` exists.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock_read();
    }
}

pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    /// Counts this guard for the thread (and keeps the guard `!Send`).
    _held: HeldLock,
}

// SAFETY: shares only `&T` through `&guard`.
unsafe impl<T: ?Sized + Sync> Sync for RwLockWriteGuard<'_, T> {}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the write guard is the only access to the data.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the write guard is the only access to the data.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock_write();
    }
}
