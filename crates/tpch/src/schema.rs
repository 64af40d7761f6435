//! The eight TPC-H tables: column names (as in the spec), types, and the typed
//! per-part buffers ("chunks") the generator fills.
//!
//! Type mapping: identifiers → `Int64`; small integers → `Int32`; every spec
//! DECIMAL (money, rates and `l_quantity`) → `Decimal` with scale 2; dates →
//! `Date`; fixed low-cardinality text (flags, modes, types, segments, clerks) →
//! `Str` (sorted dictionary); free text (names, addresses, phones, comments) →
//! `StrHeap`.

use maestro_storage::column::{ColumnBuilder, DataType, DictBuilder, StrHeap};

/// The scale of every TPC-H decimal.
pub const MONEY_SCALE: u8 = 2;

/// The typed buffer of one column kind.
macro_rules! buffer_type {
    (Int32) => { Vec<i32> };
    (Int64) => { Vec<i64> };
    (Decimal) => { Vec<i64> };
    (Date) => { Vec<i32> };
    (Str) => { DictBuilder };
    (StrHeap) => { StrHeap };
}

macro_rules! data_type {
    (Decimal) => {
        DataType::Decimal { scale: MONEY_SCALE }
    };
    ($kind:ident) => {
        DataType::$kind
    };
}

/// A buffer for `$rows` rows; heaps also reserve `$avg` bytes per row.
macro_rules! new_buffer {
    (Str, $rows:expr, $avg:expr) => {
        DictBuilder::with_capacity($rows)
    };
    (StrHeap, $rows:expr, $avg:expr) => {
        StrHeap::with_capacity($rows, heap_reserve($rows, $avg))
    };
    ($kind:ident, $rows:expr, $avg:expr) => {
        Vec::with_capacity($rows)
    };
}

macro_rules! into_builder {
    (Decimal, $buf:expr) => {
        ColumnBuilder::Decimal {
            scale: MONEY_SCALE,
            values: $buf,
        }
    };
    ($kind:ident, $buf:expr) => {
        ColumnBuilder::$kind($buf)
    };
}

/// Declares a table once: its chunk struct (one public buffer per column), its
/// name and its schema, so names, order and types cannot drift apart.
/// `col: StrHeap(27)` gives the average length used to reserve heap bytes.
macro_rules! tpch_table {
    ($(#[$doc:meta])* $chunk:ident = $table:literal {
        $($col:ident : $kind:ident $(($avg:literal))?),+ $(,)?
    }) => {
        $(#[$doc])*
        pub(crate) struct $chunk {
            $(pub(crate) $col: buffer_type!($kind),)+
        }

        impl $chunk {
            pub(crate) const NAME: &'static str = $table;
            pub(crate) const SCHEMA: &'static [(&'static str, DataType)] =
                &[$((stringify!($col), data_type!($kind)),)+];

            /// Buffers with room for `rows` rows.
            pub(crate) fn with_rows(rows: usize) -> Self {
                $chunk {
                    $($col: new_buffer!($kind, rows, 0 $(+ $avg)?),)+
                }
            }

            /// The column parts in schema order.
            pub(crate) fn into_builders(self) -> Vec<ColumnBuilder> {
                vec![$(into_builder!($kind, self.$col),)+]
            }
        }
    };
}

/// Heap bytes to reserve for `rows` strings of average length `avg`: a little
/// above the mean so that a part rarely reallocates (lengths are uniform in
/// `0.4..=1.6 × avg`, so the sum over many rows is close to `rows × avg`).
fn heap_reserve(rows: usize, avg: usize) -> usize {
    rows * avg + rows * avg / 50 + 256
}

tpch_table! {
    RegionChunk = "region" {
        r_regionkey: Int64,
        r_name: Str,
        r_comment: StrHeap(72),
    }
}

tpch_table! {
    NationChunk = "nation" {
        n_nationkey: Int64,
        n_name: Str,
        n_regionkey: Int64,
        n_comment: StrHeap(72),
    }
}

tpch_table! {
    SupplierChunk = "supplier" {
        s_suppkey: Int64,
        s_name: StrHeap(18),
        s_address: StrHeap(25),
        s_nationkey: Int64,
        s_phone: StrHeap(15),
        s_acctbal: Decimal,
        s_comment: StrHeap(63),
    }
}

tpch_table! {
    CustomerChunk = "customer" {
        c_custkey: Int64,
        c_name: StrHeap(18),
        c_address: StrHeap(25),
        c_nationkey: Int64,
        c_phone: StrHeap(15),
        c_acctbal: Decimal,
        c_mktsegment: Str,
        c_comment: StrHeap(73),
    }
}

tpch_table! {
    PartChunk = "part" {
        p_partkey: Int64,
        p_name: StrHeap(33),
        p_mfgr: Str,
        p_brand: Str,
        p_type: Str,
        p_size: Int32,
        p_container: Str,
        p_retailprice: Decimal,
        p_comment: StrHeap(14),
    }
}

tpch_table! {
    PartSuppChunk = "partsupp" {
        ps_partkey: Int64,
        ps_suppkey: Int64,
        ps_availqty: Int32,
        ps_supplycost: Decimal,
        ps_comment: StrHeap(124),
    }
}

tpch_table! {
    OrdersChunk = "orders" {
        o_orderkey: Int64,
        o_custkey: Int64,
        o_orderstatus: Str,
        o_totalprice: Decimal,
        o_orderdate: Date,
        o_orderpriority: Str,
        o_clerk: Str,
        o_shippriority: Int32,
        o_comment: StrHeap(49),
    }
}

tpch_table! {
    LineItemChunk = "lineitem" {
        l_orderkey: Int64,
        l_partkey: Int64,
        l_suppkey: Int64,
        l_linenumber: Int32,
        l_quantity: Decimal,
        l_extendedprice: Decimal,
        l_discount: Decimal,
        l_tax: Decimal,
        l_returnflag: Str,
        l_linestatus: Str,
        l_shipdate: Date,
        l_commitdate: Date,
        l_receiptdate: Date,
        l_shipinstruct: Str,
        l_shipmode: Str,
        l_comment: StrHeap(27),
    }
}

/// The names of the eight tables, smallest first.
pub const TABLE_NAMES: [&str; 8] = [
    RegionChunk::NAME,
    NationChunk::NAME,
    SupplierChunk::NAME,
    CustomerChunk::NAME,
    PartChunk::NAME,
    PartSuppChunk::NAME,
    OrdersChunk::NAME,
    LineItemChunk::NAME,
];

/// The declared schema of table `name` (column names and types), if it is one
/// of the eight.
pub fn table_schema(name: &str) -> Option<&'static [(&'static str, DataType)]> {
    Some(match name {
        "region" => RegionChunk::SCHEMA,
        "nation" => NationChunk::SCHEMA,
        "supplier" => SupplierChunk::SCHEMA,
        "customer" => CustomerChunk::SCHEMA,
        "part" => PartChunk::SCHEMA,
        "partsupp" => PartSuppChunk::SCHEMA,
        "orders" => OrdersChunk::SCHEMA,
        "lineitem" => LineItemChunk::SCHEMA,
        _ => return None,
    })
}
