//! A column table as bytes, for the durable store's bases and change records
//! (`durable.rs`): compact (values at their width, no per-value tags) and
//! decoded without trusting a byte — a bad length, tag, code, scale or
//! UTF-8 sequence is an error, never a panic or an allocation the bytes do
//! not back.
//!
//! ```text
//! table  := name: str | columns: u32 | rows: u64 | column*
//! column := name: str | kind: u8 | values
//! values := 1 int32:   rows × i32
//!         | 2 int64:   rows × i64
//!         | 3 decimal: scale: u8 | rows × i64 (scaled)
//!         | 4 date:    rows × i32 (days since 1970-01-01)
//!         | 5 dict:    dictionary: u32 | dictionary × str | rows × u32 code
//!         | 6 heap:    rows × str
//! str    := len: u32 | UTF-8 bytes
//! ```
//! All integers little-endian.

use maestro_storage::column::{Column, DecimalColumn, DictColumn, StrHeap, Table};

const INT32: u8 = 1;
const INT64: u8 = 2;
const DECIMAL: u8 = 3;
const DATE: u8 = 4;
const DICT: u8 = 5;
const HEAP: u8 = 6;

/// Appends `table`'s encoding to `out`.
pub(crate) fn encode_table(table: &Table, out: &mut Vec<u8>) {
    put_str(out, table.name());
    put_len(out, table.num_columns());
    out.extend_from_slice(&(table.num_rows() as u64).to_le_bytes());
    for (field, column) in table.schema().fields().iter().zip(table.columns()) {
        put_str(out, &field.name);
        match column {
            Column::Int32(v) => {
                out.push(INT32);
                v.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            Column::Int64(v) => {
                out.push(INT64);
                v.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            Column::Decimal(d) => {
                out.push(DECIMAL);
                out.push(d.scale());
                d.values()
                    .iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            Column::Date(v) => {
                out.push(DATE);
                v.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            Column::Str(d) => {
                out.push(DICT);
                put_len(out, d.cardinality());
                d.dictionary().iter().for_each(|s| put_str(out, s));
                d.codes()
                    .iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            Column::StrHeap(h) => {
                out.push(HEAP);
                h.iter().for_each(|s| put_str(out, s));
            }
        }
    }
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    let n = u32::try_from(n).unwrap_or_else(|_| panic!("{n} items do not fit a u32 length"));
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// Decodes a table [`encode_table`] wrote; the bytes must hold exactly one.
pub(crate) fn decode_table(bytes: &[u8]) -> Result<Table, String> {
    let mut r = Reader { bytes };
    let name = r.str()?.to_string();
    let columns = r.u32()? as usize;
    let rows = r.u64()?;
    let rows = usize::try_from(rows).map_err(|_| format!("{rows} rows"))?;
    let mut out = Vec::with_capacity(columns.min(r.bytes.len()));
    for _ in 0..columns {
        let col_name = r.str()?.to_string();
        let column = match r.u8()? {
            INT32 => Column::Int32(r.fixed(rows, i32::from_le_bytes)?),
            INT64 => Column::Int64(r.fixed(rows, i64::from_le_bytes)?),
            DECIMAL => {
                let scale = r.u8()?;
                let values = r.fixed(rows, i64::from_le_bytes)?;
                Column::Decimal(DecimalColumn::new(scale, values).map_err(|e| e.to_string())?)
            }
            DATE => Column::Date(r.fixed(rows, i32::from_le_bytes)?),
            DICT => {
                let size = r.u32()? as usize;
                let mut dictionary = Vec::with_capacity(size.min(r.bytes.len() / 4));
                for _ in 0..size {
                    dictionary.push(r.str()?);
                }
                let codes = r.fixed(rows, u32::from_le_bytes)?;
                let mut strs = Vec::with_capacity(rows);
                for code in codes {
                    let s = dictionary.get(code as usize).ok_or_else(|| {
                        format!("column {col_name}: code {code} beyond a dictionary of {size}")
                    })?;
                    strs.push(*s);
                }
                Column::Str(DictColumn::from_strs(strs))
            }
            HEAP => {
                let mut heap = StrHeap::with_capacity(rows.min(r.bytes.len() / 4), 0);
                for _ in 0..rows {
                    heap.push(r.str()?);
                }
                Column::StrHeap(heap)
            }
            other => return Err(format!("column {col_name}: unknown kind {other}")),
        };
        out.push((col_name, column));
    }
    if !r.bytes.is_empty() {
        return Err(format!("{} bytes after the table", r.bytes.len()));
    }
    Table::new(name, out).map_err(|e| e.to_string())
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err(format!(
                "cut short: {n} bytes wanted, {} left",
                self.bytes.len()
            ));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("take returned N bytes"))
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, String> {
        self.array().map(u64::from_le_bytes)
    }

    fn str(&mut self) -> Result<&'a str, String> {
        let len = self.u32()? as usize;
        std::str::from_utf8(self.take(len)?).map_err(|e| format!("a string: {e}"))
    }

    /// `rows` values of `N` bytes each (checked against the bytes left
    /// before anything is allocated).
    fn fixed<const N: usize, T>(
        &mut self,
        rows: usize,
        from: fn([u8; N]) -> T,
    ) -> Result<Vec<T>, String> {
        let bytes = rows
            .checked_mul(N)
            .ok_or_else(|| format!("{rows} values of {N} bytes"))?;
        let raw = self.take(bytes)?;
        Ok(raw
            .chunks_exact(N)
            .map(|c| from(c.try_into().expect("chunks of N bytes")))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table::new(
            "t",
            [
                ("a", Column::Int32(vec![1, -2, 3])),
                ("b", Column::Int64(vec![i64::MIN, 0, i64::MAX])),
                (
                    "c",
                    Column::Decimal(DecimalColumn::new(2, vec![100, -5, 12345]).unwrap()),
                ),
                ("d", Column::Date(vec![0, 10957, -1])),
                ("e", Column::Str(DictColumn::from_strs(["x", "y", "x"]))),
                ("f", Column::StrHeap(StrHeap::from_strs(["", "héllo", "z"]))),
            ],
        )
        .unwrap()
    }

    fn dump(t: &Table) -> Vec<String> {
        (0..t.num_rows())
            .map(|r| format!("{:?}", t.row(r)))
            .collect()
    }

    #[test]
    fn a_table_round_trips() {
        let t = sample();
        let mut bytes = Vec::new();
        encode_table(&t, &mut bytes);
        let back = decode_table(&bytes).unwrap();
        assert_eq!(back.name(), "t");
        assert_eq!(back.schema().fields(), t.schema().fields());
        assert_eq!(dump(&back), dump(&t));
    }

    #[test]
    fn every_cut_and_many_flips_are_errors_not_panics() {
        let mut bytes = Vec::new();
        encode_table(&sample(), &mut bytes);
        for cut in 0..bytes.len() {
            assert!(decode_table(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..bytes.len() {
            for bit in [0x01, 0x80] {
                let mut flipped = bytes.clone();
                flipped[at] ^= bit;
                // May decode (a flipped value is still a value) but must not
                // panic.
                let _ = decode_table(&flipped);
            }
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode_table(&long).is_err());
    }
}
