//! A loom model of group commit's wait (`src/durable/log.rs`,
//! `LogWriter::flush_through`): every committer returns, and only once its
//! record is durable; no wake-up is lost.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p maestro-txn --test loom_group_commit --release --target-dir target/loom`.
//!
//! The model is a transcription, not the crate's code:
//!
//! | model              | crate                                                        |
//! |--------------------|--------------------------------------------------------------|
//! | `pending`          | `LogWriter::pending` (only its end position)                 |
//! | `append`           | `LogWriter::append` under the commit lock (left out: it only orders appends) |
//! | `durable`          | `LogWriter::durable_lsn` (Release store after the sync, Acquire loads) |
//! | `leading`, `ended` | `LogWriter::leading`, `LogWriter::flush_ended`               |
//! | `flush`            | `flush_locked`: swap `pending`, write and sync (no-ops here), publish |
//!
//! Checked with three committers (preemptions bounded to 3): each returns
//! with `durable` at or past its record; all return (loom reports a deadlock
//! if a waiter sleeps forever). A broken variant that lets go of `leading`
//! between its check and its wait must lose a wake-up, which shows the model
//! can fail.
#![cfg(loom)]

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
struct Log {
    pending: Mutex<u64>,
    durable: AtomicU64,
    leading: Mutex<bool>,
    ended: Condvar,
}

impl Log {
    fn append(&self) -> u64 {
        let mut end = self.pending.lock().unwrap();
        *end += 1;
        *end
    }

    fn flush(&self) {
        let end = *self.pending.lock().unwrap();
        self.durable.fetch_max(end, Ordering::Release);
    }

    fn wait_durable(&self, lsn: u64, broken: bool) {
        if self.durable.load(Ordering::Acquire) >= lsn {
            return;
        }
        let mut leading = self.leading.lock().unwrap();
        loop {
            if self.durable.load(Ordering::Acquire) >= lsn {
                return;
            }
            if !*leading {
                break;
            }
            if broken {
                // Wrong: lets go of `leading` between the check and the
                // wait; a leader that ends in between notifies nobody.
                drop(leading);
                leading = self.leading.lock().unwrap();
            }
            leading = self.ended.wait(leading).unwrap();
        }
        *leading = true;
        drop(leading);
        self.flush();
        *self.leading.lock().unwrap() = false;
        self.ended.notify_all();
    }
}

fn run(broken: bool) {
    let mut builder = loom::model::Builder::new();
    // Bounded so the model runs in seconds; the lost wake-up of the broken
    // variant needs only two preemptions.
    builder.preemption_bound = Some(3);
    builder.check(move || {
        let log = Arc::new(Log::default());
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let log = Arc::clone(&log);
                loom::thread::spawn(move || {
                    let lsn = log.append();
                    log.wait_durable(lsn, broken);
                    assert!(log.durable.load(Ordering::Acquire) >= lsn);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(log.durable.load(Ordering::Acquire), 3);
    });
}

#[test]
fn every_committer_returns_once_its_record_is_durable() {
    run(false);
}

/// Loom reports the lost wake-up as a deadlock from inside a model thread,
/// a non-unwinding panic that aborts the process, so `should_panic` cannot
/// hold it: run by hand (`… --test loom_group_commit -- --ignored broken`)
/// and expect `deadlock; threads = […Blocked…]` and an abort (seen
/// 2026-11-25).
#[test]
#[ignore = "aborts the test process by design (loom's deadlock report)"]
fn broken_waiter_that_lets_go_between_check_and_wait_loses_a_wakeup() {
    run(true);
}
