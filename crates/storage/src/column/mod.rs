//! The column store: immutable tables of typed columns in plain `Vec`s, laid out
//! for fast scans.
//!
//! | type | Rust storage | for |
//! |---|---|---|
//! | `Int32`, `Int64` | `Vec<i32>`, `Vec<i64>` | keys, counts |
//! | `Decimal { scale }` | `Vec<i64>` in units of `10^-scale` ([`DecimalColumn`]) | exact money (TPC-H: scale 2) |
//! | `Date` | `Vec<i32>`, days since 1970-01-01 ([`Date`]) | dates |
//! | `Str` | `Vec<u32>` codes + sorted dictionary ([`DictColumn`]) | low-cardinality strings; codes compare like the strings |
//! | `StrHeap` | one `Vec<u8>` + offsets ([`StrHeap`]); a delta's may start with parts shared with its other versions | free text: comments, names, addresses |
//!
//! Tables are built from [`ColumnBuilder`] parts (one per loader task) that
//! [`ColumnBuilder::concat`] joins; dictionaries are merged and sorted there.
//! Every lookup by name or type returns a [`ColumnError`], never panics.

mod builder;
#[allow(clippy::module_inception)]
mod column;
mod date;
mod decimal;
mod delta;
mod delta_index;
mod dict;
mod error;
mod heap;
mod index;
mod rebuild;
mod stats;
mod table;
mod types;

pub use builder::ColumnBuilder;
pub use column::Column;
pub use date::Date;
pub use decimal::{Decimal, DecimalColumn, MAX_SCALE};
pub use delta::{Delta, DeltaError, MergePlan};
pub use delta_index::DeltaIndex;
pub use dict::{DictBuilder, DictColumn, FxHasher};
pub use error::ColumnError;
pub use heap::StrHeap;
pub use index::{IndexKey, SortedIndex};
pub use rebuild::Keep;
pub use stats::{ColumnStats, Distinct, HLL_REGISTERS, ValueRange};
pub use table::{Field, Schema, Table};
pub use types::{DataType, Value};
