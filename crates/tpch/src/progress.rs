//! Progress events of a load, passed to the caller's callback (from worker
//! threads, hence `Sync`).

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Progress {
    /// The load starts: `parts` generation tasks over eight tables.
    Started { scale_factor: f64, parts: usize },
    /// `tpchgen`'s 300 MiB text pool (the source of all comments) is ready.
    TextPoolReady { elapsed: Duration },
    /// One part of one table was generated (`done` of `total` parts overall).
    PartGenerated {
        table: &'static str,
        part: usize,
        parts: usize,
        rows: usize,
        done: usize,
        total: usize,
    },
    /// A table's parts were concatenated and its dictionaries built.
    TableReady {
        table: &'static str,
        rows: usize,
        heap_bytes: usize,
    },
    /// Everything is loaded.
    Finished {
        text_pool: Duration,
        generate: Duration,
        assemble: Duration,
        total: Duration,
        rows: usize,
        heap_bytes: usize,
    },
}

impl fmt::Display for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
        match self {
            Progress::Started {
                scale_factor,
                parts,
            } => write!(f, "loading TPC-H SF {scale_factor} in {parts} parts"),
            Progress::TextPoolReady { elapsed } => {
                write!(f, "text pool ready in {:.2} s", elapsed.as_secs_f64())
            }
            Progress::PartGenerated {
                table,
                part,
                parts,
                rows,
                done,
                total,
            } => write!(
                f,
                "[{done}/{total}] {table} part {part}/{parts}: {rows} rows"
            ),
            Progress::TableReady {
                table,
                rows,
                heap_bytes,
            } => write!(f, "{table}: {rows} rows, {:.1} MiB", mib(*heap_bytes)),
            Progress::Finished {
                text_pool,
                generate,
                assemble,
                total,
                rows,
                heap_bytes,
            } => write!(
                f,
                "loaded {rows} rows ({:.1} MiB) in {:.2} s \
                 (text pool {:.2} s, generate {:.2} s, assemble {:.2} s)",
                mib(*heap_bytes),
                total.as_secs_f64(),
                text_pool.as_secs_f64(),
                generate.as_secs_f64(),
                assemble.as_secs_f64()
            ),
        }
    }
}
