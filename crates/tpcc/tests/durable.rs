//! TPC-C on a data directory: after a run with background checkpoints, the
//! recovered database is row for row the one the run left (the same CSV
//! export), its indexes work (a second run on it keeps the consistency
//! conditions), and the acknowledgement log lists committed New-Orders.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::seed;
use maestro_tpcc::driver::{self, AckLog, Mode, Preset, RunConfig, Storage};
use maestro_tpcc::mvcc::{DurableDatabase, Opened, open_data_dir};
use maestro_tpcc::*;
use maestro_txn::{Durability, DurabilityConfig};

fn open(dir: &Path, seed: u64) -> DurableDatabase {
    let mut load = LoadConfig::new(1);
    load.seed = seed;
    open_data_dir(dir, &load, DurabilityConfig::new(Durability::Sync), &|_| {}).unwrap()
}

/// Runs 4 terminals for 600 ms; `checkpoints` adds background checkpoints
/// every 150 ms.
fn run(db: &DurableDatabase, seed: u64, ack: &Path, checkpoints: bool) -> driver::RunReport {
    let mut config = RunConfig::new(
        4,
        Duration::from_millis(600),
        Mode::Scheduler(Preset::SinglePool),
        db.constants,
    );
    config.seed = seed;
    config.contexts = 2;
    config.checkpoint_interval = checkpoints.then(|| Duration::from_millis(150));
    config.ack_log = Some(Arc::new(AckLog::open(ack).unwrap()));
    let report = driver::run_storage(Storage::Mvcc(&db.db), &config, &|_| {}).unwrap();
    assert!(report.completed() > 0);
    report
}

fn export(db: &DurableDatabase, to: &Path) -> Vec<(String, Vec<u8>)> {
    let rows = db.db.snapshot_to_2pl().unwrap();
    assert!(check_consistency(&rows).is_empty());
    export_csv(&rows, to).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(to)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            (path.display().to_string(), std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(p, b)| {
            (
                Path::new(&p)
                    .file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string(),
                b,
            )
        })
        .collect()
}

#[test]
fn a_recovered_database_is_the_one_the_run_left() {
    let seed = seed();
    let dir = std::env::temp_dir().join(format!("maestro-tpcc-durable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (data, ack) = (dir.join("data"), dir.join("acks.csv"));
    let db = open(&data, seed);
    assert!(matches!(db.opened, Opened::Created { .. }));
    let report = run(&db, seed, &ack, true);
    let durability = report.durability.as_ref().expect("a data directory run");
    let log = durability.log.as_ref().expect("sync logs");
    assert!(
        log.records > 0 && log.flushes > 0 && log.failure.is_none(),
        "{log:?}"
    );
    // Background checkpoints ran if the machine let them (timing); one
    // explicit checkpoint and more commits after it make sure recovery
    // reads a checkpoint taken under load and the log after it. That run
    // takes no background checkpoint: one after its last commit left
    // nothing to replay (seen failing ~1 in 10 on a loaded machine).
    db.db.txn.checkpoint().unwrap();
    run(&db, seed + 2, &ack, false);
    let before = export(&db, &dir.join("before"));
    drop(db);

    let db = open(&data, seed);
    let Opened::Recovered { recovery, .. } = &db.opened else {
        panic!("recovered expected");
    };
    assert!(recovery.torn_tail.is_none());
    assert!(recovery.records_replayed > 0, "seed {seed}: {recovery:?}");
    let after = export(&db, &dir.join("after"));
    assert_eq!(before.len(), 9);
    for ((name, a), (_, b)) in before.iter().zip(&after) {
        assert!(a == b, "seed {seed}: {name} differs after recovery");
    }
    // The rebuilt indexes carry a second run; its acknowledged orders and
    // the first run's are all there.
    run(&db, seed + 1, &ack, true);
    drop(db);
    let db = open(&data, seed);
    let rows = db.db.snapshot_to_2pl().unwrap();
    let acks = std::fs::read_to_string(&ack).unwrap();
    assert!(acks.lines().count() > 0);
    let mut orders = std::collections::HashSet::new();
    rows.orders.scan(|_, o| {
        orders.insert((o.o_w_id, o.o_d_id, o.o_id));
    });
    for line in acks.lines() {
        let f: Vec<u32> = line.split(',').map(|x| x.parse().unwrap()).collect();
        assert!(
            orders.contains(&(f[0] as u16, f[1] as u8, f[2])),
            "seed {seed}: acknowledged {line} missing"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
