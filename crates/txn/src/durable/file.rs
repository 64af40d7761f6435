//! The log's and the checkpoints' files: naming, listing, directory syncs,
//! and the segment file behind a trait so tests can inject write and sync
//! failures.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::clock::Timestamp;

const SEGMENT_PREFIX: &str = "wal-";
const SEGMENT_SUFFIX: &str = ".log";
const CHECKPOINT_PREFIX: &str = "checkpoint-";
const CHECKPOINT_SUFFIX: &str = ".ckpt";
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

pub(crate) fn segment_path(dir: &Path, seq: u64) -> PathBuf {
    dir.join(format!("{SEGMENT_PREFIX}{seq:08}{SEGMENT_SUFFIX}"))
}

pub(crate) fn checkpoint_path(dir: &Path, ts: Timestamp) -> PathBuf {
    dir.join(format!("{CHECKPOINT_PREFIX}{ts:020}{CHECKPOINT_SUFFIX}"))
}

/// What a data directory holds, each list sorted ascending.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// `(sequence number, path)` of every log segment.
    pub(crate) segments: Vec<(u64, PathBuf)>,
    /// `(snapshot timestamp, path)` of every finished checkpoint.
    pub(crate) checkpoints: Vec<(Timestamp, PathBuf)>,
    /// Unfinished checkpoint files (a crash during a checkpoint).
    pub(crate) temporaries: Vec<PathBuf>,
}

fn number(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    name.strip_prefix(prefix)?
        .strip_suffix(suffix)?
        .parse()
        .ok()
}

pub(crate) fn list(dir: &Path) -> io::Result<Listing> {
    let mut listing = Listing::default();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.ends_with(TEMP_SUFFIX) {
            listing.temporaries.push(entry.path());
        } else if let Some(seq) = number(name, SEGMENT_PREFIX, SEGMENT_SUFFIX) {
            listing.segments.push((seq, entry.path()));
        } else if let Some(ts) = number(name, CHECKPOINT_PREFIX, CHECKPOINT_SUFFIX) {
            listing.checkpoints.push((ts, entry.path()));
        }
    }
    listing.segments.sort();
    listing.checkpoints.sort();
    Ok(listing)
}

/// Makes a directory's entries (created, renamed, removed files) durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The file the log writer appends to.
pub(crate) trait LogFile: Send {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Makes everything written so far durable (`fdatasync`).
    fn sync(&mut self) -> io::Result<()>;
}

impl LogFile for File {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        Write::write_all(self, bytes)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }
}

/// Creates segment `seq` (which must not exist) and syncs the directory so
/// the new name survives a crash.
pub(crate) fn create_segment(dir: &Path, seq: u64) -> io::Result<File> {
    let file = OpenOptions::new()
        .create_new(true)
        .append(true)
        .open(segment_path(dir, seq))?;
    sync_dir(dir)?;
    Ok(file)
}

/// Failures to inject into the log's file, counted in flushes from 1 (tests
/// and the crash harness; `None` = never).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// This flush writes only the first half of its bytes, then fails.
    pub short_write_at_flush: Option<u64>,
    /// This flush writes its bytes, then its sync fails.
    pub sync_failure_at_flush: Option<u64>,
}

/// A segment file that fails as its [`FaultPlan`] says.
pub(crate) struct FaultyFile {
    pub(crate) inner: File,
    pub(crate) plan: FaultPlan,
    /// Flushes so far (shared across segments by the writer).
    pub(crate) flushes: u64,
}

impl LogFile for FaultyFile {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.flushes += 1;
        if self.plan.short_write_at_flush == Some(self.flushes) {
            Write::write_all(&mut self.inner, &bytes[..bytes.len() / 2])?;
            return Err(io::Error::other("injected short write"));
        }
        Write::write_all(&mut self.inner, bytes)
    }

    fn sync(&mut self) -> io::Result<()> {
        if self.plan.sync_failure_at_flush == Some(self.flushes) {
            return Err(io::Error::other("injected fsync failure"));
        }
        self.inner.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_number_and_parse_back() {
        let dir = std::env::temp_dir().join(format!("maestro-txn-list-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for seq in [10, 2, 1] {
            File::create(segment_path(&dir, seq)).unwrap();
        }
        File::create(checkpoint_path(&dir, 99)).unwrap();
        File::create(dir.join(format!("checkpoint-5{TEMP_SUFFIX}"))).unwrap();
        File::create(dir.join("unrelated.txt")).unwrap();
        let listing = list(&dir).unwrap();
        let seqs: Vec<u64> = listing.segments.iter().map(|s| s.0).collect();
        assert_eq!(seqs, vec![1, 2, 10]);
        assert_eq!(listing.checkpoints[0].0, 99);
        assert_eq!(listing.temporaries.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
