//! Checkpoint files: every durable table's rows as one snapshot sees them.
//!
//! ```text
//! file    := MAGIC | snapshot_ts: u64 LE | meta_len: u32 LE | meta
//!          | table_count: u32 LE | table* | crc32(all before): u32 LE | END
//! table   := name_len: u16 LE | name | (1 | row: u64 LE | len: u32 LE | bytes)* | 0
//! ```
//!
//! Written to `checkpoint-<ts>.tmp`, synced, renamed to
//! `checkpoint-<ts>.ckpt` and the directory synced: a checkpoint file either
//! exists whole or not at all; a `.tmp` left by a crash is ignored and
//! removed. The checksum covers everything, so a damaged file is an error
//! that names it, never a silently shorter database.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::arena::RowId;
use crate::clock::Timestamp;

const MAGIC: &[u8; 16] = b"MAESTRO-CKPT-01\n";
const END: &[u8; 4] = b"END\n";

/// Counts and checksums what passes through.
struct CrcWriter<W> {
    inner: W,
    crc: crc32fast::Hasher,
    bytes: u64,
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes one checkpoint file, table after table.
pub(crate) struct CheckpointWriter {
    out: CrcWriter<BufWriter<File>>,
    temp: PathBuf,
    rows: u64,
}

impl CheckpointWriter {
    pub(crate) fn create(
        temp: &Path,
        snapshot_ts: Timestamp,
        meta: &[u8],
        tables: u32,
    ) -> io::Result<Self> {
        let file = File::create(temp)?;
        let mut out = CrcWriter {
            inner: BufWriter::with_capacity(1 << 20, file),
            crc: crc32fast::Hasher::new(),
            bytes: 0,
        };
        out.write_all(MAGIC)?;
        out.write_all(&snapshot_ts.to_le_bytes())?;
        let meta_len = u32::try_from(meta.len()).map_err(|_| io::Error::other("meta too long"))?;
        out.write_all(&meta_len.to_le_bytes())?;
        out.write_all(meta)?;
        out.write_all(&tables.to_le_bytes())?;
        Ok(CheckpointWriter {
            out,
            temp: temp.to_path_buf(),
            rows: 0,
        })
    }

    pub(crate) fn begin_table(&mut self, name: &str) -> io::Result<()> {
        let len = u16::try_from(name.len()).map_err(|_| io::Error::other("table name too long"))?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(name.as_bytes())
    }

    pub(crate) fn row(&mut self, row: RowId, bytes: &[u8]) -> io::Result<()> {
        let len = u32::try_from(bytes.len()).map_err(|_| io::Error::other("row too long"))?;
        self.out.write_all(&[1])?;
        self.out.write_all(&row.to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(bytes)?;
        self.rows += 1;
        Ok(())
    }

    pub(crate) fn end_table(&mut self) -> io::Result<()> {
        self.out.write_all(&[0])
    }

    /// Seals the file under its final name; returns (rows, bytes).
    pub(crate) fn finish(mut self, path: &Path) -> io::Result<(u64, u64)> {
        let crc = self.out.crc.clone().finalize();
        self.out.write_all(&crc.to_le_bytes())?;
        self.out.write_all(END)?;
        let bytes = self.out.bytes;
        let file = self.out.inner.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.temp, path)?;
        Ok((self.rows, bytes))
    }
}

/// What [`CheckpointImage::for_each`] visits.
pub(crate) enum Entry<'a> {
    /// The rows that follow belong to this table.
    Table(&'a str),
    Row(RowId, &'a [u8]),
}

/// A checkpoint read back and checked.
pub(crate) struct CheckpointImage {
    pub(crate) snapshot_ts: Timestamp,
    pub(crate) meta: Vec<u8>,
    bytes: Vec<u8>,
    /// Where the tables start in `bytes`.
    tables_at: usize,
    pub(crate) tables: u32,
}

impl CheckpointImage {
    /// Reads `path` and checks its magic, checksum and trailer; the error
    /// says what is wrong (the caller names the file).
    pub(crate) fn read(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
        let fixed = MAGIC.len() + 8 + 4;
        if bytes.len() < fixed + 4 + 4 + END.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err("not a Maestro checkpoint (bad magic or too short)".into());
        }
        let body_end = bytes.len() - END.len() - 4;
        if &bytes[bytes.len() - END.len()..] != END {
            return Err("trailer missing (file cut short)".into());
        }
        let crc = u32::from_le_bytes(bytes[body_end..body_end + 4].try_into().expect("4"));
        if crc32fast::hash(&bytes[..body_end]) != crc {
            return Err("checksum mismatch".into());
        }
        let mut at = MAGIC.len();
        let snapshot_ts = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        at += 8;
        let meta_len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4")) as usize;
        at += 4;
        let meta = bytes
            .get(at..at + meta_len)
            .ok_or("metadata cut short")?
            .to_vec();
        at += meta_len;
        let tables = bytes.get(at..at + 4).ok_or("table count cut short")?;
        let tables = u32::from_le_bytes(tables.try_into().expect("4"));
        at += 4;
        let mut image = CheckpointImage {
            snapshot_ts,
            meta,
            bytes,
            tables_at: at,
            tables,
        };
        image.bytes.truncate(body_end);
        Ok(image)
    }

    /// Calls `visit` with each table and each of its rows, in file order.
    pub(crate) fn for_each(
        &self,
        mut visit: impl FnMut(Entry<'_>) -> Result<(), String>,
    ) -> Result<u64, String> {
        let bytes = &self.bytes[..];
        let mut at = self.tables_at;
        let mut rows = 0;
        let take = |at: &mut usize, n: usize| -> Result<&[u8], String> {
            let slice = bytes
                .get(*at..*at + n)
                .ok_or_else(|| format!("cut short at byte {at}"))?;
            *at += n;
            Ok(slice)
        };
        for _ in 0..self.tables {
            let len = u16::from_le_bytes(take(&mut at, 2)?.try_into().expect("2")) as usize;
            let name = std::str::from_utf8(take(&mut at, len)?)
                .map_err(|_| format!("table name at byte {at} is not UTF-8"))?;
            visit(Entry::Table(name))?;
            loop {
                match take(&mut at, 1)?[0] {
                    0 => break,
                    1 => {}
                    other => return Err(format!("bad row marker {other} at byte {}", at - 1)),
                }
                let id = u64::from_le_bytes(take(&mut at, 8)?.try_into().expect("8"));
                let len = u32::from_le_bytes(take(&mut at, 4)?.try_into().expect("4")) as usize;
                visit(Entry::Row(id, take(&mut at, len)?))?;
                rows += 1;
            }
        }
        if at != bytes.len() {
            return Err(format!(
                "{} unexpected bytes after the tables",
                bytes.len() - at
            ));
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path) -> PathBuf {
        let path = dir.join("c.ckpt");
        let mut w = CheckpointWriter::create(&dir.join("c.tmp"), 7, b"meta", 2).unwrap();
        w.begin_table("a").unwrap();
        w.row(0, b"x").unwrap();
        w.row(5, b"yz").unwrap();
        w.end_table().unwrap();
        w.begin_table("b").unwrap();
        w.end_table().unwrap();
        w.finish(&path).unwrap();
        path
    }

    #[test]
    fn a_checkpoint_reads_back_and_any_damage_is_an_error() {
        let dir = std::env::temp_dir().join(format!("maestro-ckpt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = write(&dir);
        let image = CheckpointImage::read(&path).unwrap();
        assert_eq!((image.snapshot_ts, &image.meta[..]), (7, &b"meta"[..]));
        let mut seen = Vec::new();
        let rows = image
            .for_each(|entry| {
                seen.push(match entry {
                    Entry::Table(t) => format!("table {t}"),
                    Entry::Row(r, b) => format!("{r}={}", String::from_utf8_lossy(b)),
                });
                Ok(())
            })
            .unwrap();
        assert_eq!(rows, 2);
        assert_eq!(seen, ["table a", "0=x", "5=yz", "table b"]);
        let good = std::fs::read(&path).unwrap();
        for at in (0..good.len()).step_by(3) {
            let mut bad = good.clone();
            bad[at] ^= 0x01;
            std::fs::write(&path, &bad).unwrap();
            assert!(CheckpointImage::read(&path).is_err(), "flip at {at}");
        }
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(CheckpointImage::read(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
