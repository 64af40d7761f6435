//! A loom model of the urgent turn (PROTOCOL.md, "Callers run, counted":
//! `Admission::WaitTurn`): an urgent caller beyond the urgent share sleeps
//! until a piece of urgent work ends, and no wake-up is lost.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p maestro-scheduler --test loom_turn --release --target-dir target/loom`.
//!
//! The model is a transcription of `src/turn.rs` (`TurnGate`) as `src/caller.rs`
//! uses it for the urgent share (a class's gate, `Classes::move_count`, is the
//! same protocol on the class's running count):
//!
//! | model             | crate                                                      |
//! |-------------------|------------------------------------------------------------|
//! | `Model::running`  | `Shared::urgent_running`                                   |
//! | `Model::waiters`  | `TurnGate::waiters` of `Shared::urgent_turn`               |
//! | `Model::turn`     | `TurnGate`'s mutex and condvar                             |
//! | `Model::wait`     | `TurnGate::wait`: `waiters += 1` (SeqCst), fence, lock, re-check the share, sleep on the condvar |
//! | `Model::end`      | `UrgentGuard::drop`: `running -= 1` (SeqCst), then `TurnGate::ended`: fence, `waiters > 0` → lock, notify one |
//! | `Model::caller`   | `install_as`'s admission loop: wait for the turn, then run as urgent work (`UrgentGuard`) |
//!
//! A waiter that gets its turn runs urgent work and ends it, which passes the
//! turn on: one notification per ending is enough, also with more pieces of
//! urgent work than the share running (as extras when nothing else waited)
//! and several waiters — a notification a waiter takes while the share is
//! still full is followed by another ending, and the ending that leaves room
//! wakes a waiter that can go.
//! The share is one piece of urgent work; "other work waits" is always true
//! here (so only the share decides) and the wait's time bound is left out
//! (it would mask a lost wake-up). A lost wake-up is a waiter asleep after the
//! last piece of urgent work ended: loom then reports a deadlock. The broken
//! variant (the ender reads the waiter count before it lowers the running
//! count) must make loom find one, which shows that the model can fail.
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering, fence};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// Urgent work the share allows at once.
const SHARE: usize = 1;

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Correct,
    /// `end` reads `waiters` before it lowers `running`.
    BrokenEndChecksFirst,
}

struct Model {
    running: AtomicUsize,
    waiters: AtomicUsize,
    turn: (Mutex<()>, Condvar),
    variant: Variant,
}

impl Model {
    fn wait(&self) {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let mut guard = self.turn.0.lock().unwrap();
        while self.running.load(Ordering::SeqCst) >= SHARE {
            guard = self.turn.1.wait(guard).unwrap();
        }
        drop(guard);
        self.waiters.fetch_sub(1, Ordering::Relaxed);
    }

    fn end(&self) {
        let waiting = if self.variant == Variant::BrokenEndChecksFirst {
            let w = self.waiters.load(Ordering::Relaxed) > 0;
            self.running.fetch_sub(1, Ordering::SeqCst);
            w
        } else {
            self.running.fetch_sub(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            self.waiters.load(Ordering::Relaxed) > 0
        };
        if waiting {
            let _held = self.turn.0.lock().unwrap();
            self.turn.1.notify_one();
        }
    }
}

/// `holders` pieces of urgent work run (over the share, as after a burst of
/// extras) and end while `waiters` callers wait for their turn.
fn execution(variant: Variant, holders: usize, waiters: usize) {
    let m = Arc::new(Model {
        running: AtomicUsize::new(holders),
        waiters: AtomicUsize::new(0),
        turn: (Mutex::new(()), Condvar::new()),
        variant,
    });
    let mut threads = Vec::new();
    for _ in 0..waiters {
        let m = m.clone();
        threads.push(thread::spawn(move || {
            m.wait();
            // Its turn: it runs as urgent work, then ends it.
            m.running.fetch_add(1, Ordering::SeqCst);
            m.end();
        }));
    }
    for _ in 0..holders {
        let m = m.clone();
        threads.push(thread::spawn(move || m.end()));
    }
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(m.running.load(Ordering::SeqCst), 0);
    assert_eq!(m.waiters.load(Ordering::SeqCst), 0);
}

#[test]
fn a_waiter_is_woken_when_the_urgent_work_ends() {
    loom::model(|| execution(Variant::Correct, 1, 1));
}

#[test]
fn two_waiters_two_endings() {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.check(|| execution(Variant::Correct, 2, 2));
}

#[test]
#[should_panic(expected = "deadlock")]
fn broken_end_that_checks_waiters_first_loses_a_wakeup() {
    loom::model(|| execution(Variant::BrokenEndChecksFirst, 1, 1));
}
