//! Recovery: the newest checkpoint, then the log records after it.
//!
//! Every recovered row becomes one version written by a single recovery
//! transaction state, committed at the newest recovered timestamp once all
//! rows are in place (nothing reads the database before recovery returns).
//! The clock then continues after that timestamp, so log records of this
//! run and of earlier ones stay ordered by timestamp across restarts.

use std::fs::OpenOptions;
use std::path::Path;
use std::sync::Arc;

use super::checkpoint::{CheckpointImage, Entry};
use super::file;
use super::log::ClosedSegment;
use super::record::{Frame, Payload, RedoOp, read_frame};
use super::{DurableError, DurableRows, RecoveryReport, TornTail, io_error};
use crate::db::Shared;
use crate::version::TxnState;

/// Recovers `dir` into the tables of `catalog`; returns the report, the next
/// segment number and the segments found (for later removal).
pub(super) fn recover(
    shared: &Shared,
    dir: &Path,
    catalog: &[Arc<dyn DurableRows>],
) -> Result<(RecoveryReport, u64, Vec<ClosedSegment>), DurableError> {
    let listing = file::list(dir).map_err(io_error(dir))?;
    for temp in &listing.temporaries {
        std::fs::remove_file(temp).map_err(io_error(temp))?;
    }
    let Some((_, checkpoint_path)) = listing.checkpoints.last().cloned() else {
        return Err(DurableError::DataDir {
            path: dir.to_path_buf(),
            reason: "no checkpoint to recover from".into(),
        });
    };
    let corrupt = |reason: String| DurableError::CorruptCheckpoint {
        path: checkpoint_path.clone(),
        reason,
    };
    let image = CheckpointImage::read(&checkpoint_path).map_err(corrupt)?;
    let recovery = TxnState::new();
    let expected = catalog.iter().map(|t| t.name()).collect::<Vec<_>>();
    let mut found = Vec::new();
    let mut current: Option<&Arc<dyn DurableRows>> = None;
    let checkpoint_rows = image
        .for_each(|entry| match entry {
            Entry::Table(name) => {
                found.push(name.to_string());
                current = catalog.get(found.len() - 1).filter(|t| t.name() == name);
                Ok(())
            }
            Entry::Row(row, bytes) => match current {
                Some(table) => table.recover_put(row, bytes, &recovery),
                None => Ok(()),
            },
        })
        .map_err(corrupt)?;
    if found != expected {
        return Err(DurableError::CatalogMismatch {
            expected: expected.join(", "),
            found: found.join(", "),
        });
    }
    let mut report = RecoveryReport {
        checkpoint: checkpoint_path.clone(),
        checkpoint_ts: image.snapshot_ts,
        checkpoint_rows,
        segments: listing.segments.len(),
        records_replayed: 0,
        records_skipped: 0,
        torn_tail: None,
        recovered_ts: image.snapshot_ts,
        meta: image.meta.clone(),
        elapsed: Default::default(),
    };
    drop(image);
    let mut closed = Vec::new();
    let last = listing.segments.len().saturating_sub(1);
    for (index, (seq, path)) in listing.segments.iter().enumerate() {
        let max_ts = replay_segment(path, index == last, catalog, &recovery, &mut report)?;
        closed.push(ClosedSegment { seq: *seq, max_ts });
    }
    if report.recovered_ts > 0 {
        shared.keeper.clock.recover(report.recovered_ts);
        recovery.mark_committed(report.recovered_ts);
    }
    let next_seq = listing.segments.last().map_or(1, |(seq, _)| seq + 1);
    Ok((report, next_seq, closed))
}

/// Replays one segment's records after the checkpoint; returns the newest
/// commit timestamp in it. Damage is cut off when `is_last` (a torn tail),
/// an error otherwise.
fn replay_segment(
    path: &Path,
    is_last: bool,
    catalog: &[Arc<dyn DurableRows>],
    recovery: &Arc<TxnState>,
    report: &mut RecoveryReport,
) -> Result<u64, DurableError> {
    let bytes = std::fs::read(path).map_err(io_error(path))?;
    let mut at = 0usize;
    let mut max_ts = 0;
    loop {
        let (payload, len) = match read_frame(&bytes[at..]) {
            Frame::End => break,
            Frame::Record { payload, bytes } => (payload, bytes),
            Frame::Damaged { reason } if is_last => {
                cut_tail(path, at as u64)?;
                report.torn_tail = Some(TornTail {
                    path: path.to_path_buf(),
                    offset: at as u64,
                    bytes_cut: (bytes.len() - at) as u64,
                    reason,
                });
                break;
            }
            Frame::Damaged { reason } => {
                return Err(DurableError::CorruptLog {
                    path: path.to_path_buf(),
                    offset: at as u64,
                    reason,
                });
            }
        };
        let corrupt = |reason: String| DurableError::CorruptLog {
            path: path.to_path_buf(),
            offset: at as u64,
            reason,
        };
        let mut record = Payload::parse(payload).map_err(corrupt)?;
        let ts = record.commit_ts;
        max_ts = max_ts.max(ts);
        if ts <= report.checkpoint_ts {
            report.records_skipped += 1;
        } else if ts <= report.recovered_ts {
            return Err(corrupt(format!(
                "commit timestamp {ts} after {} (log out of order)",
                report.recovered_ts
            )));
        } else {
            while let Some(op) = record.next_op() {
                apply(op.map_err(corrupt)?, catalog, recovery).map_err(corrupt)?;
            }
            report.records_replayed += 1;
            report.recovered_ts = ts;
        }
        at += len;
    }
    Ok(max_ts)
}

fn apply(
    op: RedoOp<'_>,
    catalog: &[Arc<dyn DurableRows>],
    recovery: &Arc<TxnState>,
) -> Result<(), String> {
    let table = |id: u32| {
        catalog
            .get(id as usize)
            .ok_or_else(|| format!("table id {id} beyond the {} registered", catalog.len()))
    };
    match op {
        RedoOp::Put {
            table: t,
            row,
            value,
        } => table(t)?.recover_put(row, value, recovery),
        RedoOp::Delete { table: t, row } => table(t)?.recover_delete(row),
        RedoOp::Counter {
            table: t,
            row,
            created,
            amount,
        } => table(t)?.recover_counter(row, created, amount),
    }
}

/// Truncates a torn tail so the next run appends after whole records only.
fn cut_tail(path: &Path, offset: u64) -> Result<(), DurableError> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_error(path))?;
    file.set_len(offset).map_err(io_error(path))?;
    file.sync_all().map_err(io_error(path))
}
