//! A join's two inputs run concurrently (fork-join on the scheduler): each
//! side's scan waits at a rendezvous for the other side's scan to start,
//! which only completes if the two sides run at the same time. Run one after
//! the other, the first side would wait forever: the rendezvous gives up after
//! a generous deadline and the statement fails, so this test can fail.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maestro_execution::{Executor, Granularity};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_sql::{Catalog, TableDef, TpchCatalog};
use maestro_storage::column::Table;

/// Turns a sequential run into a failure; never reached when the sides overlap.
const RENDEZVOUS_DEADLINE: Duration = Duration::from_secs(30);

/// The TPC-H catalog, whose `data` for the tables in `meet` returns only once
/// every one of them has been asked for.
struct Rendezvous<'d> {
    inner: TpchCatalog<'d>,
    meet: BTreeSet<&'static str>,
    asked: Mutex<BTreeSet<String>>,
}

impl Catalog for Rendezvous<'_> {
    fn table(&self, name: &str) -> Option<TableDef> {
        self.inner.table(name)
    }

    fn data(&self, name: &str) -> Option<&Table> {
        if self.meet.contains(name) {
            self.asked.lock().unwrap().insert(name.to_string());
            let start = Instant::now();
            while self.asked.lock().unwrap().len() < self.meet.len() {
                if start.elapsed() > RENDEZVOUS_DEADLINE {
                    return None; // the statement fails: "table … has no data"
                }
                std::thread::yield_now();
            }
        }
        self.inner.data(name)
    }

    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }
}

#[test]
fn the_two_inputs_of_a_join_run_at_the_same_time() {
    let scheduler =
        Arc::new(Scheduler::new(SchedulerConfig::single_hints().with_contexts(2)).unwrap());
    let db = common::db();
    let exec = Executor::new(scheduler, Granularity::Static);
    let sql = "select count(*) from nation, region where n_regionkey = r_regionkey";
    let (plan, _) = maestro_sql::plan(&TpchCatalog::new(db), sql).unwrap();
    let catalog = Rendezvous {
        inner: TpchCatalog::new(db),
        meet: BTreeSet::from(["nation", "region"]),
        asked: Mutex::new(BTreeSet::new()),
    };
    let ctx = exec.context("SQL");
    let result = exec
        .run_plan(|| maestro_sql::lower::run(&ctx, &catalog, &plan))
        .expect("the sides met: they ran concurrently");
    assert_eq!(result.rows.len(), 1);
    assert_eq!(
        format!("{:?}", result.rows[0][0]),
        format!("{:?}", common::query(sql).unwrap().rows[0][0])
    );
}
