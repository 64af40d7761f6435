//! TPC-C on Maestro — the data layer: schema, storage, indexes, loader,
//! consistency checks and CSV export. Transactions, the 2PL lock manager and
//! the CLI build on it.
//!
//! ```no_run
//! use maestro_tpcc::{LoadConfig, check_consistency, load};
//! let (db, report) = load(&LoadConfig::new(2), &|p| eprintln!("{p}")).unwrap();
//! eprintln!("loaded {} rows in {:?}", report.counts.total(), report.elapsed);
//! let row = db.customer_row(1, 3, 42).unwrap().unwrap();
//! db.customer.write(row).unwrap().c_balance += 1000; // +10.00
//! assert!(check_consistency(&db).is_empty());
//! ```
//!
//! What exists:
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
//! For the transaction layer:
//! - Latches are physical only: hold one for a single read or update, never
//!   across a lock wait. Logical isolation is 2PL's job: lock a key (the packed
//!   key of [`keys`] plus the table is a natural lock name), then look it up,
//!   then latch the row.
//! - Range lookups (`customers_by_last_name`, `oldest_new_order`,
//!   `latest_order`, `order_lines`) lock nothing and are not snapshots; guard
//!   them against phantoms with a coarser lock (e.g. the district's).
//! - Undo: an insert is undone by `delete::<R>(row_id)`, a delete (Delivery's
//!   new-order row) by `undelete::<R>(row_id)`; in-place updates need before
//!   images in the undo log.
//! - New-Order takes `o_id` with [`District::take_next_o_id`] (fails, never
//!   wraps, at [`keys::MAX_O_ID`]); counters use `saturating_add`.
//! - Run-time NURand constants: [`NuRandConstants::for_run`] on
//!   [`LoadReport::constants`] (clause 2.1.6.1).
//! - Payment/Order-Status by name: generate a name *number* with
//!   [`TpccRng::last_name_number`] and call `customers_by_last_name`; sort the
//!   matches by `c_first` and take position ⌈n/2⌉.

mod check;
mod csv_rows;
mod db;
mod error;
mod export;
pub mod keys;
mod load;
mod lookup;
pub mod random;
mod row_keys;
pub mod schema;
mod table;

pub use check::{Violation, check_consistency};
pub use db::{Database, Index, IndexEntries, IndexId, Indexes, Row, TableCounts};
pub use error::TpccError;
pub use export::{export_csv, format_fixed};
pub use load::{LoadConfig, LoadProgress, LoadReport, load};
pub use random::{NuRand, NuRandConstants, TpccRng};
pub use schema::*;
pub use table::{MAX_ROWS, RowId, Table};
