//! The redo log writer: appends under the commit lock, group commit outside
//! it, segments, failure.
//!
//! Protocol (see `PROTOCOL.md`, "Redo log and group commit"):
//! 1. A committing transaction encodes its ops (`RedoBuf`) before the commit
//!    lock. Under the commit lock, after validation, it appends the framed
//!    record to `pending` ([`LogWriter::append`]), so the log's byte order is
//!    the commit-timestamp order, and gets its end position (`lsn`).
//! 2. After the commit lock it waits until `durable_lsn >= lsn`
//!    ([`LogWriter::wait_durable`]) inside the configured blocking region (on
//!    the scheduler: *inactive by user*, another worker takes the core).
//!    If no flush runs (`leading` false) it becomes the group leader: it
//!    swaps out everything pending (every record appended meanwhile, by any
//!    transaction), writes it, `fdatasync`s, publishes the new
//!    `durable_lsn`, clears `leading` and wakes every waiter
//!    (`flush_ended`). A waiter woken finds its record durable, or leads the
//!    next group if none runs, or waits again.
//! 3. A failed write or sync poisons the writer: the covered commits and
//!    every later one get an error (never an acknowledgement), and appends
//!    are refused, so nothing commits after a record that may be lost.
//!
//! No wake-up is lost: a waiter checks `durable_lsn`, `failure` and
//! `leading` under the `leading` mutex and sleeps on `flush_ended` only
//! while a leader runs; the leader publishes `durable_lsn` (or `failure`)
//! before it takes that mutex to clear `leading` and notify all, so a waiter
//! either saw the new state or is already asleep when the notification
//! comes. Progress: when no leader runs, a waiter leads; `pending` holds its
//! record until some flush takes it, and a flush takes everything appended
//! before it swapped the buffer. No deadlock: the order is `leading` alone;
//! `flusher` → `pending`; the commit lock → `pending`; nobody holds
//! `leading` while taking another lock, and the commit lock is never held
//! while waiting for a flush.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::file::{FaultPlan, FaultyFile, LogFile, create_segment, segment_path, sync_dir};
use super::record::{PAYLOAD_BYTES_MAX, RedoBuf};
use super::{Durability, DurabilityConfig, LogStats};
use crate::clock::Timestamp;

struct Pending {
    bytes: Vec<u8>,
    /// Log position after the last appended record (bytes since the writer
    /// started).
    end_lsn: u64,
    /// Newest commit timestamp appended.
    max_ts: Timestamp,
    records: u64,
}

/// A finished segment and the newest commit timestamp it holds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClosedSegment {
    pub(crate) seq: u64,
    pub(crate) max_ts: Timestamp,
}

struct Flusher {
    file: Box<dyn LogFile>,
    seq: u64,
    segment_bytes: u64,
    segment_max_ts: Timestamp,
    closed: Vec<ClosedSegment>,
    /// The previous flush's buffer, kept for its capacity.
    spare: Vec<u8>,
    /// Flushes so far (the fault plan counts in them).
    flushes: u64,
}

pub(crate) struct LogWriter {
    dir: PathBuf,
    config: DurabilityConfig,
    pending: Mutex<Pending>,
    flusher: Mutex<Flusher>,
    /// True while a waiter leads a flush; the others wait on `flush_ended`
    /// instead of queueing on `flusher` (where a leader that barged in
    /// again would flush one record at a time while waiters already
    /// durable sat parked behind it).
    leading: Mutex<bool>,
    flush_ended: Condvar,
    durable_lsn: AtomicU64,
    failure: OnceLock<String>,
    records_flushed: AtomicU64,
    flushes: AtomicU64,
    bytes_flushed: AtomicU64,
    sync_ns: AtomicU64,
}

fn open(dir: &Path, seq: u64, faults: FaultPlan, flushes: u64) -> io::Result<Box<dyn LogFile>> {
    let file = create_segment(dir, seq)?;
    if faults == FaultPlan::default() {
        return Ok(Box::new(file));
    }
    Ok(Box::new(FaultyFile {
        inner: file,
        plan: faults,
        flushes,
    }))
}

impl LogWriter {
    /// Starts a writer on a fresh segment `seq` in `dir`; `closed` are the
    /// segments already there (recovered), removable by later checkpoints.
    pub(crate) fn start(
        dir: &Path,
        config: DurabilityConfig,
        seq: u64,
        closed: Vec<ClosedSegment>,
    ) -> io::Result<Self> {
        Ok(LogWriter {
            dir: dir.to_path_buf(),
            config,
            pending: Mutex::new(Pending {
                bytes: Vec::new(),
                end_lsn: 0,
                max_ts: 0,
                records: 0,
            }),
            flusher: Mutex::new(Flusher {
                file: open(dir, seq, config.faults, 0)?,
                seq,
                segment_bytes: 0,
                segment_max_ts: 0,
                closed,
                spare: Vec::new(),
                flushes: 0,
            }),
            leading: Mutex::new(false),
            flush_ended: Condvar::new(),
            durable_lsn: AtomicU64::new(0),
            failure: OnceLock::new(),
            records_flushed: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            bytes_flushed: AtomicU64::new(0),
            sync_ns: AtomicU64::new(0),
        })
    }

    /// Why the log stopped accepting commits, if it did.
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    /// Appends `record` with `commit_ts`; returns its end position. Called
    /// under the commit lock, in commit-timestamp order.
    pub(crate) fn append(&self, commit_ts: Timestamp, record: &mut RedoBuf) -> Result<u64, String> {
        if let Some(failure) = self.failure() {
            return Err(failure.to_string());
        }
        if record.payload_len() > PAYLOAD_BYTES_MAX {
            return Err(format!(
                "a transaction's redo record of {} bytes exceeds the {PAYLOAD_BYTES_MAX}-byte bound",
                record.payload_len()
            ));
        }
        let mut pending = self.pending.lock();
        let before = pending.bytes.len();
        record.frame_into(commit_ts, &mut pending.bytes);
        pending.end_lsn += (pending.bytes.len() - before) as u64;
        pending.max_ts = commit_ts;
        pending.records += 1;
        Ok(pending.end_lsn)
    }

    /// Returns once the record ending at `lsn` is durable, or the error that
    /// stopped the log.
    pub(crate) fn wait_durable(&self, lsn: u64) -> Result<(), String> {
        // Acquire: pairs with the Release store in `flush_locked` after the
        // sync that made `lsn` durable.
        if self.durable_lsn.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        let mut result = Ok(());
        (self.config.blocking)(&mut || result = self.flush_through(lsn));
        result
    }

    /// Waits until `lsn` is durable, leading a flush whenever none runs.
    fn flush_through(&self, lsn: u64) -> Result<(), String> {
        let mut leading = self.leading.lock();
        loop {
            // Acquire: as in `wait_durable`.
            if self.durable_lsn.load(Ordering::Acquire) >= lsn {
                return Ok(());
            }
            if let Some(failure) = self.failure() {
                return Err(failure.to_string());
            }
            if !*leading {
                break;
            }
            // A flush runs; its leader notifies when it ends (under
            // `leading`, which this wait releases atomically).
            self.flush_ended.wait(&mut leading);
        }
        *leading = true;
        drop(leading);
        let flushed = {
            let mut flusher = self.flusher.lock();
            if let Durability::Group { delay } = self.config.durability {
                self.let_group_grow(delay);
            }
            self.flush_locked(&mut flusher)
        };
        *self.leading.lock() = false;
        self.flush_ended.notify_all();
        flushed
    }

    /// The group leader's wait before a flush: at most `delay`, and no
    /// longer than commits keep arriving — once a look finds no record
    /// appended since the previous one, the group is as large as it gets
    /// (every committer in flight is waiting), so waiting on is pure latency.
    fn let_group_grow(&self, delay: Duration) {
        /// Between two looks at the pending records. Guessed: a few times a
        /// TPC-C transaction's CPU time (~10–25 µs), well below a sync.
        const LOOK_EVERY: Duration = Duration::from_micros(50);
        let deadline = Instant::now() + delay;
        let mut seen = self.pending.lock().records;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            std::thread::sleep(LOOK_EVERY.min(deadline - now));
            let records = self.pending.lock().records;
            if records == seen {
                return;
            }
            seen = records;
        }
    }

    /// Writes and syncs everything pending.
    fn flush_locked(&self, flusher: &mut Flusher) -> Result<(), String> {
        let (mut bytes, end_lsn, max_ts, records) = {
            let mut pending = self.pending.lock();
            let bytes = std::mem::replace(&mut pending.bytes, std::mem::take(&mut flusher.spare));
            let records = std::mem::take(&mut pending.records);
            (bytes, pending.end_lsn, pending.max_ts, records)
        };
        if bytes.is_empty() {
            flusher.spare = bytes;
            return Ok(());
        }
        flusher.flushes += 1;
        let started = Instant::now();
        let written = flusher
            .file
            .write_all(&bytes)
            .and_then(|()| flusher.file.sync());
        if let Err(error) = written {
            let path = segment_path(&self.dir, flusher.seq);
            return Err(self.fail(format!(
                "log flush to {} failed: {error}; the commits it covered are not acknowledged and the database accepts no more commits (restart to recover)",
                path.display()
            )));
        }
        let relaxed = Ordering::Relaxed;
        self.sync_ns
            .fetch_add(started.elapsed().as_nanos() as u64, relaxed);
        self.flushes.fetch_add(1, relaxed);
        self.records_flushed.fetch_add(records, relaxed);
        self.bytes_flushed.fetch_add(bytes.len() as u64, relaxed);
        flusher.segment_bytes += bytes.len() as u64;
        flusher.segment_max_ts = flusher.segment_max_ts.max(max_ts);
        // Release: pairs with the Acquire loads in `wait_durable` and
        // `flush_through`: a waiter that sees `end_lsn` sees the sync done.
        self.durable_lsn.store(end_lsn, Ordering::Release);
        bytes.clear();
        flusher.spare = bytes;
        if flusher.segment_bytes >= self.config.segment_bytes_max {
            self.rotate_locked(flusher)?;
        }
        Ok(())
    }

    fn fail(&self, reason: String) -> String {
        let _ = self.failure.set(reason);
        self.failure().expect("just set").to_string()
    }

    fn rotate_locked(&self, flusher: &mut Flusher) -> Result<(), String> {
        let seq = flusher.seq + 1;
        let file = open(&self.dir, seq, self.config.faults, flusher.flushes).map_err(|error| {
            self.fail(format!(
                "creating log segment {} failed: {error}",
                segment_path(&self.dir, seq).display()
            ))
        })?;
        flusher.closed.push(ClosedSegment {
            seq: flusher.seq,
            max_ts: flusher.segment_max_ts,
        });
        flusher.file = file;
        flusher.seq = seq;
        flusher.segment_bytes = 0;
        flusher.segment_max_ts = 0;
        Ok(())
    }

    /// Flushes what is pending and starts a new segment, so every record
    /// appended before the call lies in a closed segment.
    pub(crate) fn rotate(&self) -> Result<(), String> {
        let mut flusher = self.flusher.lock();
        if let Some(failure) = self.failure() {
            return Err(failure.to_string());
        }
        self.flush_locked(&mut flusher)?;
        self.rotate_locked(&mut flusher)
    }

    /// Removes the closed segments whose records are all at or before
    /// `ts` (a durable checkpoint covers them); returns how many.
    pub(crate) fn remove_through(&self, ts: Timestamp) -> io::Result<usize> {
        let mut flusher = self.flusher.lock();
        let mut removed = 0;
        let mut kept = Vec::new();
        for segment in std::mem::take(&mut flusher.closed) {
            if segment.max_ts <= ts {
                std::fs::remove_file(segment_path(&self.dir, segment.seq))?;
                removed += 1;
            } else {
                kept.push(segment);
            }
        }
        flusher.closed = kept;
        if removed > 0 {
            sync_dir(&self.dir)?;
        }
        Ok(removed)
    }

    pub(crate) fn stats(&self) -> LogStats {
        let relaxed = Ordering::Relaxed;
        LogStats {
            durability: self.config.durability,
            flushes: self.flushes.load(relaxed),
            records: self.records_flushed.load(relaxed),
            bytes: self.bytes_flushed.load(relaxed),
            sync_time: Duration::from_nanos(self.sync_ns.load(relaxed)),
            failure: self.failure().map(str::to_string),
        }
    }
}
