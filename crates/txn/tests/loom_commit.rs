//! A loom model of the commit install/visibility step (`src/clock.rs`,
//! `src/version.rs`): no reader sees part of a transaction.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p maestro-txn --test loom_commit --release --target-dir target/loom`.
//!
//! The model is a transcription, not the crate's code:
//!
//! | model                    | crate                                                        |
//! |--------------------------|--------------------------------------------------------------|
//! | `state`                  | `TxnState::commit_ts`, shared by every version the writer made |
//! | `visible`                | `Clock::visible`                                             |
//! | `commit`                 | `Clock::commit`: `mark_committed(ts)` (Release), then `visible = ts` (SeqCst) |
//! | `begin` + two row reads  | `Snapshot::begin` reads `visible` (SeqCst); `Chain::read` loads the writer's state (Acquire) once per row |
//!
//! Checked: a snapshot sees both rows of the transaction or neither, and sees
//! them whenever its read timestamp is at or past the commit timestamp. The
//! commit lock is left out (one committer). A broken variant that publishes
//! `visible` before installing must fail, which shows the model can fail.
//!
//! Not modelled: the snapshot registry's publication protocol
//! (`src/snapshot.rs`), whose argument rests on the single total order of
//! SeqCst accesses, which loom does not model (it weakens SeqCst accesses).
#![cfg(loom)]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicU64, Ordering};

const ACTIVE: u64 = 0;
const COMMIT_TS: u64 = 1;

struct Model {
    state: AtomicU64,
    visible: AtomicU64,
}

fn commit(model: &Model, install_first: bool) {
    if install_first {
        model.state.store(COMMIT_TS, Ordering::Release);
        model.visible.store(COMMIT_TS, Ordering::SeqCst);
    } else {
        model.visible.store(COMMIT_TS, Ordering::SeqCst);
        model.state.store(COMMIT_TS, Ordering::Release);
    }
}

/// One snapshot reading both rows the transaction wrote.
fn read_snapshot(model: &Model) {
    let read_ts = model.visible.load(Ordering::SeqCst);
    let sees = |state: u64| state != ACTIVE && state <= read_ts;
    let row_a = sees(model.state.load(Ordering::Acquire));
    let row_b = sees(model.state.load(Ordering::Acquire));
    assert_eq!(row_a, row_b, "a snapshot saw part of a transaction");
    assert_eq!(
        row_a,
        read_ts >= COMMIT_TS,
        "snapshot at {read_ts} misjudged the commit"
    );
}

fn run(install_first: bool) {
    loom::model(move || {
        let model = Arc::new(Model {
            state: AtomicU64::new(ACTIVE),
            visible: AtomicU64::new(0),
        });
        let committer = {
            let model = Arc::clone(&model);
            loom::thread::spawn(move || commit(&model, install_first))
        };
        read_snapshot(&model);
        committer.join().unwrap();
        read_snapshot(&model);
    });
}

#[test]
fn install_then_publish_is_atomic_for_readers() {
    run(true);
}

#[test]
#[should_panic]
fn publish_before_install_is_caught() {
    run(false);
}
