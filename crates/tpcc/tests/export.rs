//! CSV export: file per table, spec column names as header, one line per row,
//! exact decimals, empty nulls, quoting.

mod common;

use std::path::PathBuf;

use common::*;
use maestro_tpcc::*;

fn out_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Fields of a CSV line: commas outside quotes, plus one.
fn fields(line: &str) -> usize {
    let mut quoted = false;
    1 + line
        .chars()
        .filter(|&c| {
            quoted ^= c == '"';
            c == ',' && !quoted
        })
        .count()
}

#[test]
fn every_table_gets_a_header_and_one_line_per_row() {
    let db = small_database();
    let dir = out_dir("tpcc-export");
    let written = export_csv(&db, &dir).unwrap();
    assert_eq!(written, db.counts().by_table());
    for (table, rows) in written {
        let text = std::fs::read_to_string(dir.join(format!("{table}.csv"))).unwrap();
        assert_eq!(text.lines().count() as u64, rows + 1, "{table}");
        let header = text.lines().next().unwrap();
        assert!(header.starts_with(&table[..1]) && header == header.to_lowercase());
        for line in text.lines() {
            assert_eq!(fields(line), fields(header), "{table}: {line}");
        }
    }
    let read = |t: &str| std::fs::read_to_string(dir.join(format!("{t}.csv"))).unwrap();
    let warehouse = read("warehouse");
    let mut lines = warehouse.lines();
    assert_eq!(
        lines.next(),
        Some("w_id,w_name,w_street_1,w_street_2,w_city,w_state,w_zip,w_tax,w_ytd")
    );
    assert_eq!(
        lines.next(),
        Some("1,W1,1 Main St,\"Suite, 5\",Springfield,CA,123411111,0.1250,3.00")
    );
    let customer = read("customer");
    let c1 = customer.lines().nth(1).unwrap();
    assert!(c1.starts_with("1,1,1,Zed,OE,BARBARESE,"), "{c1}");
    assert!(c1.ends_with(",50000.00,0.1234,-10.00,10.00,1,0,\"said \"\"hi\"\", then left\""));
    let orders = read("orders");
    assert_eq!(orders.lines().nth(1), Some("1,1,1,1,1700000000,,2,1"));
    let stock = read("stock");
    let header = stock.lines().next().unwrap();
    assert!(header.starts_with("s_i_id,s_w_id,s_quantity,s_dist_01,s_dist_02,"));
    assert!(header.ends_with("s_dist_10,s_ytd,s_order_cnt,s_remote_cnt,s_data"));
    assert_eq!(
        header.split(',').count(),
        stock.lines().nth(1).unwrap().split(',').count()
    );
    let district = read("district");
    assert_eq!(
        district.lines().nth(1),
        Some("1,1,D1,2 Elm St,,Shelbyville,NV,987611111,0.0005,3.00,4")
    );
}

#[test]
fn deleted_rows_are_not_exported() {
    let db = small_database();
    let (_, row) = db.oldest_new_order(1, 1).unwrap().unwrap();
    db.delete::<NewOrder>(row).unwrap();
    let dir = out_dir("tpcc-export-deleted");
    export_csv(&db, &dir).unwrap();
    let text = std::fs::read_to_string(dir.join("new_order.csv")).unwrap();
    assert_eq!(text, "no_o_id,no_d_id,no_w_id\n3,1,1\n");
}
