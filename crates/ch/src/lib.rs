//! CH-benCHmark (Cole et al., DBTest 2011) on Maestro: TPC-C's transactions
//! and 22 analytical queries on the same data, one MVCC storage — the first
//! paper's mixed workload on *shared* data (issue 16).
//!
//! - [`tables`]: SUPPLIER, NATION, REGION as BenchBase generates them;
//! - [`db`]: the database (TPC-C on `maestro_tpcc::mvcc` + the CH tables)
//!   and the per-query snapshot;
//! - [`queries`]: the analytical queries over one snapshot;
//! - [`answer`]: typed answers, their CSV form and comparison;
//! - [`sql`]: the queries as SQL text (what DuckDB and the SQL front end run);
//! - [`export`]: every table of one snapshot as CSV (`ch snapshot`);
//! - [`run`]: `ch run`, terminals and analytical clients together;
//! - [`time`]: civil time for timestamps.

pub mod answer;
pub mod columns;
pub mod db;
pub mod export;
pub mod fixture;
pub mod queries;
pub mod run;
pub mod sql;
pub mod tables;
pub mod time;

pub use answer::{Answer, Value};
pub use db::{ChConfig, ChDatabase, Snap};
pub use queries::{QUERIES, Query, query};
