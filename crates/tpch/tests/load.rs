//! Loading TPC-H into the column store, checked against `tpchgen` itself.

use std::collections::HashSet;
use std::fmt::Display;
use std::sync::{Mutex, OnceLock};

use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_storage::column::{Column, ColumnError, DataType, Date, Table, Value};
use maestro_tpch::{
    Database, LoadError, LoadOptions, Progress, TABLE_NAMES, load, load_with, spec_row_count,
    table_schema,
};
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

const SF: f64 = 0.01;

fn scheduler() -> &'static Scheduler {
    static S: OnceLock<Scheduler> = OnceLock::new();
    S.get_or_init(|| Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts"))
}

/// One SF 0.01 database shared by the tests.
fn db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| load(scheduler(), SF, &|_| {}).expect("SF 0.01 loads"))
}

/// Row `i` of `table` in dbgen's `.tbl` format, from the column values.
/// `l_quantity` is a spec DECIMAL here but an integer in `.tbl`.
fn tbl_row(table: &Table, i: usize) -> String {
    let mut out = String::new();
    for (field, value) in table.schema().fields().iter().zip(table.row(i)) {
        match (field.name.as_str(), value) {
            ("l_quantity", Value::Decimal(d)) => {
                assert_eq!(d.value % 100, 0, "whole quantities");
                out += &(d.value / 100).to_string();
            }
            _ => out += &value.to_string(),
        }
        out.push('|');
    }
    out
}

/// Every row of `table` equals the generator's row formatted by its `Display`.
fn assert_rows_match<T: Display>(table: &Table, expected: impl Iterator<Item = T>) {
    let mut n = 0;
    for (i, row) in expected.enumerate() {
        assert_eq!(
            tbl_row(table, i),
            row.to_string(),
            "{} row {i}",
            table.name()
        );
        n += 1;
    }
    assert_eq!(n, table.num_rows(), "{} row count", table.name());
}

#[test]
fn row_counts_match_spec_and_tpchgen() {
    let db = db();
    let generated = [
        RegionGenerator::default().iter().count(),
        NationGenerator::default().iter().count(),
        SupplierGenerator::new(SF, 1, 1).iter().count(),
        CustomerGenerator::new(SF, 1, 1).iter().count(),
        PartGenerator::new(SF, 1, 1).iter().count(),
        PartSuppGenerator::new(SF, 1, 1).iter().count(),
        OrderGenerator::new(SF, 1, 1).iter().count(),
        LineItemGenerator::new(SF, 1, 1).iter().count(),
    ];
    for ((table, name), count) in db.tables().iter().zip(TABLE_NAMES).zip(generated) {
        assert_eq!(table.name(), name);
        assert_eq!(table.num_rows(), count, "{name} vs tpchgen");
        if let Some(spec) = spec_row_count(name, SF) {
            assert_eq!(table.num_rows() as u64, spec, "{name} vs spec");
        }
    }
    assert_eq!(db.lineitem.num_rows(), 60_175);
    assert_eq!(db.orders.num_rows(), 15_000);
    assert_eq!(db.partsupp.num_rows(), 8_000);
    assert_eq!(db.total_rows(), 86_805);
}

#[test]
fn every_row_matches_tpchgen_display() {
    let db = db();
    assert_rows_match(&db.region, RegionGenerator::default().iter());
    assert_rows_match(&db.nation, NationGenerator::default().iter());
    assert_rows_match(&db.supplier, SupplierGenerator::new(SF, 1, 1).iter());
    assert_rows_match(&db.customer, CustomerGenerator::new(SF, 1, 1).iter());
    assert_rows_match(&db.part, PartGenerator::new(SF, 1, 1).iter());
    assert_rows_match(&db.partsupp, PartSuppGenerator::new(SF, 1, 1).iter());
    assert_rows_match(&db.orders, OrderGenerator::new(SF, 1, 1).iter());
    assert_rows_match(&db.lineitem, LineItemGenerator::new(SF, 1, 1).iter());
}

#[test]
fn known_first_rows() {
    // Values of dbgen's first rows that do not depend on the scale factor.
    let db = db();
    let region = &db.region;
    let names: Vec<&str> = (0..5)
        .map(|i| region.dict("r_name").unwrap().get(i))
        .collect();
    assert_eq!(
        names,
        ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
    );
    assert_eq!(db.nation.dict("n_name").unwrap().get(0), "ALGERIA");
    assert_eq!(
        db.nation.heap("n_comment").unwrap().get(0),
        " haggle. carefully final deposits detect slyly agai"
    );

    let o = &db.orders;
    assert_eq!(o.i64("o_orderkey").unwrap()[..3], [1, 2, 3]);
    assert_eq!(
        Date(o.date("o_orderdate").unwrap()[0]).to_string(),
        "1996-01-02"
    );
    assert_eq!(o.dict("o_orderpriority").unwrap().get(0), "5-LOW");
    assert_eq!(o.dict("o_orderstatus").unwrap().get(0), "O");

    let l = &db.lineitem;
    assert_eq!(l.i64("l_orderkey").unwrap()[..3], [1, 1, 1]);
    assert_eq!(l.i32("l_linenumber").unwrap()[..3], [1, 2, 3]);
    assert_eq!(
        l.decimal("l_quantity").unwrap().values()[..3],
        [1700, 3600, 800]
    );
    assert_eq!(l.decimal("l_discount").unwrap().values()[..3], [4, 9, 10]);
    assert_eq!(l.decimal("l_tax").unwrap().values()[..3], [2, 6, 2]);
    let date = |col: &str, i: usize| Date(l.date(col).unwrap()[i]).to_string();
    assert_eq!(date("l_shipdate", 0), "1996-03-13");
    assert_eq!(date("l_commitdate", 0), "1996-02-12");
    assert_eq!(date("l_receiptdate", 0), "1996-03-22");
    assert_eq!(l.dict("l_returnflag").unwrap().get(0), "N");
    assert_eq!(l.dict("l_linestatus").unwrap().get(0), "O");
    assert_eq!(
        l.dict("l_shipinstruct").unwrap().get(0),
        "DELIVER IN PERSON"
    );
    assert_eq!(l.dict("l_shipmode").unwrap().get(0), "TRUCK");
    assert_eq!(
        l.heap("l_comment").unwrap().get(0),
        "egular courts above the"
    );
}

#[test]
fn decimals_are_exact() {
    let db = db();
    let l = &db.lineitem;
    let price = l.decimal("l_extendedprice").unwrap();
    assert_eq!(price.scale(), 2);
    // Exact sum against tpchgen's own decimals.
    let expected: i64 = LineItemGenerator::new(SF, 1, 1)
        .iter()
        .map(|r| r.l_extendedprice.into_inner())
        .sum();
    assert_eq!(price.values().iter().sum::<i64>(), expected);
    // Spec: L_EXTENDEDPRICE = L_QUANTITY × P_RETAILPRICE, exactly.
    let retail = db.part.decimal("p_retailprice").unwrap().values();
    let partkeys = db.part.i64("p_partkey").unwrap();
    assert!(partkeys.iter().enumerate().all(|(i, &k)| k == i as i64 + 1));
    let qty = l.decimal("l_quantity").unwrap().values();
    for (row, &pk) in l.i64("l_partkey").unwrap().iter().enumerate() {
        assert_eq!(
            price.values()[row] * 100,
            qty[row] * retail[pk as usize - 1],
            "row {row}"
        );
    }
    // Discounts 0.00..=0.10 and taxes 0.00..=0.08, as integers of cents.
    let disc = l.decimal("l_discount").unwrap().values();
    assert!(disc.iter().all(|d| (0..=10).contains(d)));
    let tax = l.decimal("l_tax").unwrap().values();
    assert!(tax.iter().all(|t| (0..=8).contains(t)));
    // Negative balances format exactly.
    let bal = db.customer.decimal("c_acctbal").unwrap();
    let neg = (0..bal.len()).find(|&i| bal.values()[i] < 0).unwrap();
    assert!(bal.get(neg).to_string().starts_with('-'));
}

#[test]
fn dates_round_trip_and_stay_in_range() {
    let db = db();
    let lo = Date::parse("1992-01-01").unwrap().days();
    let hi = Date::parse("1998-12-31").unwrap().days();
    for (table, col) in [
        (&db.orders, "o_orderdate"),
        (&db.lineitem, "l_shipdate"),
        (&db.lineitem, "l_commitdate"),
        (&db.lineitem, "l_receiptdate"),
    ] {
        for &d in table.date(col).unwrap() {
            assert!((lo..=hi).contains(&d), "{col} {d}");
            assert_eq!(Date::parse(&Date(d).to_string()).unwrap().days(), d);
        }
    }
    let ship = db.lineitem.date("l_shipdate").unwrap();
    let receipt = db.lineitem.date("l_receiptdate").unwrap();
    assert!(ship.iter().zip(receipt).all(|(s, r)| s < r));
}

#[test]
fn dictionary_codes_order_like_strings() {
    let db = db();
    let mut dict_columns = 0;
    for table in db.tables() {
        for (field, col) in table.schema().fields().iter().zip(table.columns()) {
            let Column::Str(dict) = col else { continue };
            dict_columns += 1;
            let values: Vec<&str> = dict.dictionary().iter().collect();
            assert!(
                values.windows(2).all(|w| w[0] < w[1]),
                "{} sorted",
                field.name
            );
            for (code, v) in values.iter().enumerate() {
                assert_eq!(dict.code_of(v), Some(code as u32));
            }
            let codes = dict.codes();
            let step = (codes.len() / 500).max(1);
            for i in (0..codes.len()).step_by(step) {
                for j in (0..codes.len()).step_by(step * 7) {
                    assert_eq!(
                        codes[i].cmp(&codes[j]),
                        dict.get(i).cmp(dict.get(j)),
                        "{} rows {i}, {j}",
                        field.name
                    );
                }
            }
            let distinct: HashSet<u32> = codes.iter().copied().collect();
            assert_eq!(
                distinct.len(),
                dict.cardinality(),
                "{} no unused codes",
                field.name
            );
        }
    }
    assert_eq!(dict_columns, 14);
    let modes = db.lineitem.dict("l_shipmode").unwrap();
    let all: Vec<&str> = modes.dictionary().iter().collect();
    assert_eq!(
        all,
        ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"]
    );
    let promo = db.part.dict("p_type").unwrap().prefix_range("PROMO");
    assert_eq!(promo.len(), 25);
}

#[test]
fn schemas_use_spec_names_and_types() {
    let db = db();
    for table in db.tables() {
        let declared = table_schema(table.name()).unwrap();
        let actual: Vec<(&str, DataType)> = table
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name.as_str(), f.data_type))
            .collect();
        assert_eq!(actual, declared);
    }
    let names: Vec<&str> = db.lineitem.schema().names().collect();
    assert_eq!(
        names,
        [
            "l_orderkey",
            "l_partkey",
            "l_suppkey",
            "l_linenumber",
            "l_quantity",
            "l_extendedprice",
            "l_discount",
            "l_tax",
            "l_returnflag",
            "l_linestatus",
            "l_shipdate",
            "l_commitdate",
            "l_receiptdate",
            "l_shipinstruct",
            "l_shipmode",
            "l_comment"
        ]
    );
    let columns: usize = db.tables().iter().map(|t| t.num_columns()).sum();
    assert_eq!(columns, 3 + 4 + 7 + 8 + 9 + 5 + 9 + 16);
    assert!(db.table("orders").is_some() && db.table("order").is_none());
    assert!(matches!(
        db.lineitem.i64("l_nope"),
        Err(ColumnError::UnknownColumn { .. })
    ));
    assert!(matches!(
        db.lineitem.i32("l_orderkey"),
        Err(ColumnError::TypeMismatch {
            expected: DataType::Int32,
            found: DataType::Int64,
            ..
        })
    ));
    assert!(db.heap_bytes() > 8 * 1024 * 1024);
}

#[test]
fn bad_scale_factors_are_rejected() {
    for sf in [0.0, -1.0, 0.001, 10.5, 1000.0, f64::NAN, f64::INFINITY] {
        let err = load(scheduler(), sf, &|_| {
            panic!("no progress before validation")
        })
        .unwrap_err();
        assert!(
            matches!(err, LoadError::InvalidScaleFactor { .. }),
            "{sf}: {err}"
        );
    }
    let options = LoadOptions {
        rows_per_part: 0,
        ..LoadOptions::new(SF)
    };
    assert!(matches!(
        load_with(scheduler(), &options, &|_| {}),
        Err(LoadError::InvalidOption { .. })
    ));
}

#[test]
fn many_small_parts_give_the_same_data_and_report_progress() {
    let events = Mutex::new(Vec::new());
    let options = LoadOptions {
        rows_per_part: 2_000,
        ..LoadOptions::new(SF)
    };
    let fine = load_with(scheduler(), &options, &|p| {
        events.lock().unwrap().push(p.clone())
    })
    .unwrap();
    assert_eq!(&fine, db());

    let events = events.into_inner().unwrap();
    let Progress::Started { parts, .. } = events[0] else {
        panic!("first event: {:?}", events[0])
    };
    let generated: Vec<(&str, usize)> = events
        .iter()
        .filter_map(|e| match e {
            Progress::PartGenerated { table, rows, .. } => Some((*table, *rows)),
            _ => None,
        })
        .collect();
    assert_eq!(generated.len(), parts);
    assert!(parts > 40, "{parts} parts");
    let lineitem_rows: usize = generated
        .iter()
        .filter(|(t, _)| *t == "lineitem")
        .map(|(_, r)| r)
        .sum();
    assert_eq!(lineitem_rows, 60_175);
    let ready = events
        .iter()
        .filter(|e| matches!(e, Progress::TableReady { .. }))
        .count();
    assert_eq!(ready, 8);
    assert!(matches!(
        events.last(),
        Some(Progress::Finished { rows: 86_805, .. })
    ));
}

/// `cargo test --release -p maestro-tpch -- --ignored --nocapture`
#[test]
#[ignore = "SF 1: about 1 GB and a few seconds in release builds"]
fn sf1_loads_spec_row_counts() {
    let start = std::time::Instant::now();
    let db = load(scheduler(), 1.0, &|_| {}).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(db.lineitem.num_rows(), 6_001_215);
    for table in db.tables() {
        if let Some(spec) = spec_row_count(table.name(), 1.0) {
            assert_eq!(table.num_rows() as u64, spec, "{}", table.name());
        }
    }
    println!(
        "SF 1 loaded in {:.2} s, {:.1} MiB of columns",
        elapsed.as_secs_f64(),
        db.heap_bytes() as f64 / (1024.0 * 1024.0)
    );
}
