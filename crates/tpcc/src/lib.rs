//! TPC-C on Maestro: schema, storage, indexes, loader, consistency checks,
//! CSV export, and on top of them the five transactions under strict
//! two-phase locking with scheduler-aware lock waits, and a driver.
//!
//! ```no_run
//! use std::time::Duration;
//! use maestro_tpcc::driver::{self, Mode, Preset, RunConfig};
//! use maestro_tpcc::{LoadConfig, check_consistency, load};
//! let (db, loaded) = load(&LoadConfig::new(2), &|p| eprintln!("{p}")).unwrap();
//! let mode = Mode::Scheduler(Preset::SinglePool);
//! let config = RunConfig::new(8, Duration::from_secs(10), mode, loaded.constants);
//! let report = driver::run(&db, &config, &|p| eprintln!("{p}")).unwrap();
//! println!("{report}"); // tpmC, tps, abort rate, latency percentiles per type
//! assert!(check_consistency(&db).is_empty());
//! ```
//!
//! The data layer:
//! - [`schema`]: one struct per table with the spec's fields; money in cents
//!   ([`Money`]), rates in ten-thousandths ([`Rate`]), dates as Unix seconds.
//! - [`Table`]: an append-only arena per table; a row id addresses a row
//!   forever; each row has a short physical latch (`read`/`write`); appends
//!   are concurrent; delete only marks.
//! - [`Database`]: the nine tables plus ten `OlcBTree<u64, RowId>` indexes
//!   (every primary key, customers by last name, orders by customer) keyed by
//!   the order-preserving packed keys of [`keys`]. [`Database::insert`] /
//!   [`Database::delete`] / [`Database::undelete`] keep tables and indexes in
//!   step; typed lookups (`customer_row`, `customers_by_last_name`,
//!   `latest_order`, `oldest_new_order`, `order_lines`, …) return row ids.
//! - [`random`]: NURand with load/run constants, last names, a-/n-strings.
//! - [`load()`]: the clause 4.3.3.1 population, warehouses in parallel.
//! - [`check_consistency`]: conditions 1–4 of clause 3.3.2.
//! - [`export_csv`]: `DIR/<table>.csv` with the spec's column names.
//!
//! The transaction layer:
//! - [`lock`]: the lock manager — strict 2PL on named resources (a lock
//!   space per mutable column group plus a packed key), shared/exclusive with
//!   upgrade, conflicting requests waiting in FIFO queues (writers do not
//!   starve) with deadlock detection on a wait-for graph, a sharded table,
//!   waits through `maestro_scheduler::sync` so a waiting transaction is a
//!   *blocked* worker. Its protocol is written down in its module docs.
//! - [`txn`]: New-Order, Payment, Order-Status, Delivery and Stock-Level
//!   (clause 2), their inputs and generator (clause 2.x.1, NURand with the
//!   run's constants), an undo log of column-group before-images and inverse
//!   inserts/deletes, and [`txn::execute`], which retries a deadlock victim
//!   with its original age. The locking rules per transaction (which
//!   lock guards which read, and how phantoms are excluded) are in its
//!   module docs.
//! - [`driver`]: terminals running the 45/43/4/4/4 mix with zero keying and
//!   think times, as one scheduler task per transaction (presets
//!   `single-pool`, `single-pool-nosys`, `single-hints`) or on their own
//!   threads (`receivers`); [`driver::run`] returns a [`driver::RunReport`]
//!   (commits, user rollbacks and deadlock aborts per type, tpmC,
//!   transactions per second, latency percentiles, lock and scheduler
//!   counters, and an audit of what committed transactions changed).
//!
//! Rules the layers share:
//! - Latches are physical only: held for a single read or update, never
//!   across a lock wait, and never two write latches at once. Logical
//!   isolation is 2PL's job: lock, then look up, then latch the row.
//! - Range lookups lock nothing and are not snapshots; the transactions guard
//!   them with coarser locks (`DistrictNextOId`, `DeliveryQueue`) or lock what
//!   they found and re-check it is still live.
//! - New-Order takes `o_id` with [`District::take_next_o_id`] (fails, never
//!   wraps, at [`keys::MAX_O_ID`]); counters use `saturating_add`.

mod check;
mod csv_rows;
mod db;
pub mod driver;
mod error;
mod export;
pub mod keys;
mod load;
pub mod lock;
mod lookup;
pub mod mvcc;
pub mod random;
mod row_keys;
pub mod schema;
mod table;
pub mod txn;

pub use check::{Violation, check_consistency};
pub use db::{Database, Index, IndexEntries, IndexId, Indexes, Row, TableCounts};
pub use error::TpccError;
pub use export::{DateFormat, export_csv, export_csv_with, format_fixed};
pub use load::{LoadConfig, LoadProgress, LoadReport, load};
pub use random::{NuRand, NuRandConstants, TpccRng};
pub use schema::*;
pub use table::{MAX_ROWS, RowId, Table};
