//! The redo log's bytes: one *record* per committed transaction, framed with
//! its length and a CRC-32 so a torn or corrupt tail is detected on recovery.
//!
//! ```text
//! frame   := payload_len: u32 LE | crc32(payload): u32 LE | payload
//! payload := commit_ts: u64 LE | op*
//! op      := 1 (put)     | table: u32 LE | row: u64 LE | len: u32 LE | value bytes
//!          | 2 (delete)  | table: u32 LE | row: u64 LE
//!          | 3 (counter) | table: u32 LE | row: u64 LE | created: u8 | amount: i64 LE
//! ```
//!
//! Logical redo at row granularity: a put carries the row's whole new value
//! (encoded by the table's codec), so replay needs no before-image and no page
//! layout; a counter op carries the transaction's *delta* (additions commute,
//! so replaying deltas in log order gives the committed sum), or the initial
//! value when `created` is 1. Row ids are part of the op: the arena never
//! reuses an id, so an id names one row across checkpoint and log.

use crate::arena::RowId;
use crate::clock::Timestamp;

/// Bytes of a frame's header (length and checksum).
pub(crate) const FRAME_HEADER_BYTES: usize = 8;
/// A payload longer than this is refused when written and treated as
/// corruption when read. Guessed: 256 MiB is far above any transaction the
/// engine runs (a TPC-C New-Order is ~2 KiB), and bounds what a corrupt
/// length field can make recovery allocate.
pub(crate) const PAYLOAD_BYTES_MAX: usize = 256 << 20;

const OP_PUT: u8 = 1;
const OP_DELETE: u8 = 2;
const OP_COUNTER: u8 = 3;

/// One logged change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RedoOp<'a> {
    /// The row's value after the transaction (insert or update).
    Put {
        table: u32,
        row: RowId,
        value: &'a [u8],
    },
    /// The row was deleted.
    Delete { table: u32, row: RowId },
    /// A counter was created holding `amount` (`created`), or had `amount`
    /// added.
    Counter {
        table: u32,
        row: RowId,
        created: bool,
        amount: i64,
    },
}

/// A transaction's redo ops, encoded before its commit (outside the commit
/// lock); the commit timestamp is patched in when it is drawn.
#[derive(Debug, Default)]
pub(crate) struct RedoBuf {
    /// `commit_ts` placeholder followed by the ops.
    payload: Vec<u8>,
    ops: usize,
}

impl RedoBuf {
    pub(crate) fn new() -> Self {
        RedoBuf {
            payload: vec![0; 8],
            ops: 0,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ops == 0
    }

    fn op_header(&mut self, kind: u8, table: u32, row: RowId) {
        self.payload.push(kind);
        self.payload.extend_from_slice(&table.to_le_bytes());
        self.payload.extend_from_slice(&row.to_le_bytes());
        self.ops += 1;
    }

    /// A put whose value `encode` appends.
    pub(crate) fn put(&mut self, table: u32, row: RowId, encode: impl FnOnce(&mut Vec<u8>)) {
        self.op_header(OP_PUT, table, row);
        let len_at = self.payload.len();
        self.payload.extend_from_slice(&[0; 4]);
        encode(&mut self.payload);
        let len = self.payload.len() - len_at - 4;
        let len = u32::try_from(len).unwrap_or_else(|_| panic!("row value of {len} bytes"));
        self.payload[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
    }

    pub(crate) fn delete(&mut self, table: u32, row: RowId) {
        self.op_header(OP_DELETE, table, row);
    }

    pub(crate) fn counter(&mut self, table: u32, row: RowId, created: bool, amount: i64) {
        self.op_header(OP_COUNTER, table, row);
        self.payload.push(u8::from(created));
        self.payload.extend_from_slice(&amount.to_le_bytes());
    }

    /// Payload bytes so far (without the frame).
    pub(crate) fn payload_len(&self) -> usize {
        self.payload.len()
    }

    /// Appends the framed record with `commit_ts` to `out`.
    pub(crate) fn frame_into(&mut self, commit_ts: Timestamp, out: &mut Vec<u8>) {
        self.payload[..8].copy_from_slice(&commit_ts.to_le_bytes());
        let len = u32::try_from(self.payload.len()).expect("checked against PAYLOAD_BYTES_MAX");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&self.payload).to_le_bytes());
        out.extend_from_slice(&self.payload);
    }
}

/// What reading the frame at the start of some bytes found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame<'a> {
    /// A whole frame with a valid checksum: its payload and its length in
    /// bytes, header included.
    Record { payload: &'a [u8], bytes: usize },
    /// No bytes left: the log ends cleanly here.
    End,
    /// A header or payload cut short, a length beyond the bound, or a
    /// checksum mismatch: a torn write (at the tail) or corruption.
    Damaged { reason: String },
}

/// Reads the frame at the start of `bytes`.
pub(crate) fn read_frame(bytes: &[u8]) -> Frame<'_> {
    if bytes.is_empty() {
        return Frame::End;
    }
    if bytes.len() < FRAME_HEADER_BYTES {
        return Frame::Damaged {
            reason: format!("frame header cut short ({} of 8 bytes)", bytes.len()),
        };
    }
    let len = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if !(8..=PAYLOAD_BYTES_MAX).contains(&len) {
        return Frame::Damaged {
            reason: format!("payload length {len} out of range"),
        };
    }
    let Some(payload) = bytes.get(FRAME_HEADER_BYTES..FRAME_HEADER_BYTES + len) else {
        return Frame::Damaged {
            reason: format!(
                "payload cut short ({} of {len} bytes)",
                bytes.len() - FRAME_HEADER_BYTES
            ),
        };
    };
    if crc32fast::hash(payload) != crc {
        return Frame::Damaged {
            reason: "checksum mismatch".to_string(),
        };
    }
    Frame::Record {
        payload,
        bytes: FRAME_HEADER_BYTES + len,
    }
}

/// A checked payload's commit timestamp and ops.
pub(crate) struct Payload<'a> {
    pub(crate) commit_ts: Timestamp,
    rest: &'a [u8],
}

impl<'a> Payload<'a> {
    pub(crate) fn parse(payload: &'a [u8]) -> Result<Self, String> {
        let (ts, rest) = take::<8>(payload)?;
        Ok(Payload {
            commit_ts: u64::from_le_bytes(ts),
            rest,
        })
    }

    /// The next op; `None` after the last. A malformed op (impossible behind
    /// a valid checksum unless the writer was broken) is an error.
    pub(crate) fn next_op(&mut self) -> Option<Result<RedoOp<'a>, String>> {
        if self.rest.is_empty() {
            return None;
        }
        Some(self.parse_op())
    }

    fn parse_op(&mut self) -> Result<RedoOp<'a>, String> {
        let ([kind], rest) = take::<1>(self.rest)?;
        let (table, rest) = take::<4>(rest)?;
        let (row, rest) = take::<8>(rest)?;
        let (table, row) = (u32::from_le_bytes(table), u64::from_le_bytes(row));
        let (op, rest) = match kind {
            OP_PUT => {
                let (len, rest) = take::<4>(rest)?;
                let len = u32::from_le_bytes(len) as usize;
                if rest.len() < len {
                    return Err(format!("put of {len} bytes with {} left", rest.len()));
                }
                let (value, rest) = rest.split_at(len);
                (RedoOp::Put { table, row, value }, rest)
            }
            OP_DELETE => (RedoOp::Delete { table, row }, rest),
            OP_COUNTER => {
                let ([created], rest) = take::<1>(rest)?;
                let (amount, rest) = take::<8>(rest)?;
                let op = RedoOp::Counter {
                    table,
                    row,
                    created: created != 0,
                    amount: i64::from_le_bytes(amount),
                };
                (op, rest)
            }
            other => return Err(format!("unknown op kind {other}")),
        };
        self.rest = rest;
        Ok(op)
    }
}

fn take<const N: usize>(bytes: &[u8]) -> Result<([u8; N], &[u8]), String> {
    if bytes.len() < N {
        return Err(format!("op cut short: {} of {N} bytes", bytes.len()));
    }
    let (head, rest) = bytes.split_at(N);
    Ok((head.try_into().expect("length checked"), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ts: Timestamp) -> Vec<u8> {
        let mut buf = RedoBuf::new();
        buf.put(2, 7, |out| out.extend_from_slice(b"hello"));
        buf.delete(3, 9);
        buf.counter(4, 1, true, -5);
        let mut out = Vec::new();
        buf.frame_into(ts, &mut out);
        out
    }

    #[test]
    fn a_record_reads_back_op_by_op() {
        let bytes = record(42);
        let Frame::Record { payload, bytes: n } = read_frame(&bytes) else {
            panic!("{:?}", read_frame(&bytes));
        };
        assert_eq!(n, bytes.len());
        let mut p = Payload::parse(payload).unwrap();
        assert_eq!(p.commit_ts, 42);
        let ops: Vec<_> = std::iter::from_fn(|| p.next_op())
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            ops,
            vec![
                RedoOp::Put {
                    table: 2,
                    row: 7,
                    value: b"hello"
                },
                RedoOp::Delete { table: 3, row: 9 },
                RedoOp::Counter {
                    table: 4,
                    row: 1,
                    created: true,
                    amount: -5
                },
            ]
        );
    }

    #[test]
    fn every_cut_and_every_flipped_byte_is_damage() {
        let bytes = record(1);
        for cut in 1..bytes.len() {
            assert!(
                matches!(read_frame(&bytes[..cut]), Frame::Damaged { .. }),
                "cut at {cut}"
            );
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            assert!(
                matches!(read_frame(&flipped), Frame::Damaged { .. }),
                "flip at {at}"
            );
        }
        assert_eq!(read_frame(&[]), Frame::End);
    }
}
