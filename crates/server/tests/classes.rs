//! Workload classes from SQL sessions: `SET maestro.workload_class` puts a
//! session's statements in a class `maestro serve --class` defined — its
//! share of the workers, its timeout (57014), its memory limit (53200) and
//! its admission control (53000, retryable); a session whose
//! application_name is a class's name runs in that class unless it SETs
//! another. No timing is assumed: the admission test holds the class's only
//! slot itself.

mod common;

use common::{LONG, Server, sqlstate};
use maestro_scheduler::ClassStats;

fn stats(server: &Server, name: &str) -> ClassStats {
    server
        .scheduler
        .class_stats()
        .into_iter()
        .find(|s| s.name == name)
        .expect("class defined")
}

#[test]
fn a_session_runs_its_statements_in_its_class() {
    let server = Server::start_with_classes(&["olap:weight=2,admission=4", "oltp:priority=high"]);
    server.rt.block_on(async {
        let c = server.connect().await;
        let show = async |c: &tokio_postgres::Client| -> String {
            let rows = c.simple_query("SHOW maestro.workload_class").await.unwrap();
            match &rows[1] {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).unwrap().to_string(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(show(&c).await, "default");
        c.simple_query("CREATE TABLE t (a BIGINT)").await.unwrap();
        c.simple_query("INSERT INTO t VALUES (1), (2), (3)")
            .await
            .unwrap();

        c.simple_query("SET maestro.workload_class = 'olap'")
            .await
            .unwrap();
        assert_eq!(show(&c).await, "olap");
        let before = stats(&server, "olap");
        for _ in 0..3 {
            let n: i64 = c
                .query_one("select sum(a) from t", &[])
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 6);
        }
        let after = stats(&server, "olap");
        assert_eq!(
            after.admission.admitted - before.admission.admitted,
            3,
            "every statement passed the class's admission control"
        );
        assert!(after.entered > before.entered, "{after:?}");
        assert_eq!(stats(&server, "oltp").admission.admitted, 0);

        // Unknown class: 22023, and the session keeps its class.
        let e = c
            .simple_query("SET maestro.workload_class = 'nope'")
            .await
            .unwrap_err();
        let (code, msg) = sqlstate(&e);
        assert_eq!(code, "22023", "{msg}");
        assert!(msg.contains("nope") && msg.contains("olap"), "{msg}");
        assert_eq!(show(&c).await, "olap");

        // RESET and DEFAULT: back to no class.
        c.simple_query("RESET maestro.workload_class")
            .await
            .unwrap();
        assert_eq!(show(&c).await, "default");
        c.simple_query("SET maestro.workload_class TO oltp")
            .await
            .unwrap();
        assert_eq!(show(&c).await, "oltp");
        c.simple_query("SET maestro.workload_class TO DEFAULT")
            .await
            .unwrap();
        assert_eq!(show(&c).await, "default");
        let admitted = stats(&server, "olap").admission.admitted;
        c.query_one("select sum(a) from t", &[]).await.unwrap();
        assert_eq!(stats(&server, "olap").admission.admitted, admitted);
    });
}

async fn show_class(c: &tokio_postgres::Client) -> String {
    let rows = c.simple_query("SHOW maestro.workload_class").await.unwrap();
    match &rows[1] {
        tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).unwrap().to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn application_name_selects_the_class_of_that_name_and_set_overrides_it() {
    let server = Server::start_with_classes(&["olap:admission=4", "etl"]);
    server.rt.block_on(async {
        let setup = server.connect().await;
        setup
            .simple_query("CREATE TABLE t (a BIGINT)")
            .await
            .unwrap();
        setup
            .simple_query("INSERT INTO t VALUES (1), (2)")
            .await
            .unwrap();
        let sum = async |c: &tokio_postgres::Client| {
            let n: i64 = c
                .query_one("select sum(a) from t", &[])
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 3);
        };

        let c = server.connect_with("application_name=olap").await;
        assert_eq!(show_class(&c).await, "olap");
        let admitted = stats(&server, "olap").admission.admitted;
        sum(&c).await;
        assert_eq!(stats(&server, "olap").admission.admitted, admitted + 1);

        // SET wins over the application name, DEFAULT included; RESET goes
        // back to the application's class.
        c.simple_query("SET maestro.workload_class = etl")
            .await
            .unwrap();
        assert_eq!(show_class(&c).await, "etl");
        c.simple_query("SET maestro.workload_class TO DEFAULT")
            .await
            .unwrap();
        assert_eq!(show_class(&c).await, "default");
        sum(&c).await;
        assert_eq!(stats(&server, "olap").admission.admitted, admitted + 1);
        c.simple_query("RESET maestro.workload_class")
            .await
            .unwrap();
        assert_eq!(show_class(&c).await, "olap");
        // Changing the application name changes the class it selects.
        c.simple_query("SET application_name = 'etl'")
            .await
            .unwrap();
        assert_eq!(show_class(&c).await, "etl");

        // A name that is no class's: the default class, no error.
        let other = server.connect_with("application_name=psql").await;
        assert_eq!(show_class(&other).await, "default");
        sum(&other).await;
        assert_eq!(stats(&server, "olap").admission.admitted, admitted + 1);
    });
}

#[test]
fn class_timeout_and_memory_limit_stop_a_long_query() {
    let server = Server::start_with_classes(&["slow:timeout-ms=1", "tight:statement-memory-mb=1"]);
    server.rt.block_on(async {
        let c = server.connect().await;
        c.simple_query("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        c.simple_query("SET maestro.workload_class = slow")
            .await
            .unwrap();
        let e = c.query(LONG, &[]).await.unwrap_err();
        let (code, msg) = sqlstate(&e);
        assert_eq!(code, "57014", "{msg}");
        assert_eq!(msg, "canceling statement due to statement timeout");

        c.simple_query("SET maestro.workload_class = tight")
            .await
            .unwrap();
        let e = c.query(LONG, &[]).await.unwrap_err();
        let (code, msg) = sqlstate(&e);
        assert_eq!(code, "53200", "{msg}");
        assert!(msg.contains("statement memory limit"), "{msg}");
        assert_eq!(stats(&server, "tight").memory_used, 0, "all of it freed");

        // The session goes on.
        c.simple_query("RESET maestro.workload_class")
            .await
            .unwrap();
        let n: i64 = c
            .query_one("select count(*) from nation", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 25);
    });
}

#[test]
fn an_admission_rejection_is_retryable_and_counted() {
    // One statement at a time, no queue; loads never queue or reject.
    let server =
        Server::start_with_classes(&["one:admission=1/0,queue-load=1000,reject-load=1000"]);
    let class = server.scheduler.class_by_name("one").unwrap();
    server.rt.block_on(async {
        let c = server.connect().await;
        c.simple_query("SET maestro.workload_class = one")
            .await
            .unwrap();
        // The test holds the class's only slot: the session's statement
        // finds it taken and nowhere to wait.
        let held = server.scheduler.admit(class).expect("admitted");
        let e = c.query("select 1", &[]).await.unwrap_err();
        let (code, msg) = sqlstate(&e);
        assert_eq!(code, "53000", "{msg}");
        assert!(msg.contains("retryable"), "{msg}");
        assert_eq!(stats(&server, "one").admission.rejected, 1);
        drop(held);
        let n: i64 = c.query_one("select 1", &[]).await.unwrap().get(0);
        assert_eq!(n, 1, "the retry runs");
        let counts = stats(&server, "one").admission;
        assert_eq!((counts.admitted, counts.rejected), (2, 1));
    });
}
