//! Whole-scheduler behaviour of task graphs: shape checks, ordering, priorities,
//! re-issue, context inheritance, panics.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use maestro_scheduler::{
    GraphError, Scheduler, SchedulerConfig, Step, TaskContext, TaskGraph, current, with_context,
};
use parking_lot::Mutex;

fn sched(preset: &str, contexts: usize) -> Scheduler {
    let mut cfg = SchedulerConfig::preset(preset)
        .unwrap()
        .with_contexts(contexts);
    cfg.seed = Some(42);
    Scheduler::new(cfg).unwrap()
}

#[test]
fn diamond_runs_in_dependency_order() {
    let s = sched("single-pool", 2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut g = TaskGraph::new();
    let mk = |name: &'static str| {
        let log = log.clone();
        move || log.lock().push(name)
    };
    let a = g.add(mk("a"));
    let b = g.add(mk("b"));
    let c = g.add(mk("c"));
    let d = g.add(mk("d"));
    g.edge(a, b);
    g.edge(a, c);
    g.edge(b, d);
    g.edge(c, d);
    s.submit(g).unwrap().wait().unwrap();
    let log = log.lock();
    assert_eq!(log.len(), 4);
    assert_eq!(log[0], "a");
    assert_eq!(log[3], "d");
}

#[test]
fn malformed_graphs_are_refused() {
    let s = sched("single-pool", 2);
    assert_eq!(s.submit(TaskGraph::new()).err(), Some(GraphError::Empty));
    let mut g = TaskGraph::new();
    g.add(|| {});
    g.add(|| {});
    assert_eq!(
        s.submit(g).err(),
        Some(GraphError::MultipleRoots(vec![0, 1]))
    );
    let mut g = TaskGraph::new();
    let r = g.add(|| {});
    let a = g.add(|| {});
    let b = g.add(|| {});
    g.edge(r, a);
    g.edge(a, b);
    g.edge(b, a);
    assert_eq!(s.submit(g).err(), Some(GraphError::Cycle));
}

#[test]
fn panic_reaches_wait_and_scheduler_survives() {
    let s = sched("single-pool", 2);
    for round in 0..20 {
        let ran_after = Arc::new(AtomicUsize::new(0));
        let mut g = TaskGraph::new().with_label(format!("round {round}"));
        let root = g.add(|| {});
        let bad = g.add(move || panic!("boom {round}"));
        g.name(bad, "bad node");
        let r2 = ran_after.clone();
        let after = g.add(move || {
            r2.fetch_add(1, Ordering::SeqCst);
        });
        g.edge(root, bad);
        g.edge(bad, after);
        let err = s.submit(g).unwrap().wait().unwrap_err();
        assert_eq!(err.message, format!("boom {round}"));
        assert!(err.origin.contains("bad node"), "{}", err.origin);
        assert_eq!(
            ran_after.load(Ordering::SeqCst),
            0,
            "successors of a panicked node are skipped"
        );
        // Later graphs are still served.
        let h = s.spawn(move || round * 2);
        assert_eq!(h.join().unwrap(), round * 2);
    }
    assert!(s.stats().workers_total >= 2);
}

#[test]
fn spawned_task_panic_is_returned() {
    let s = sched("single-hints", 2);
    let e = s
        .spawn(|| -> u32 { panic!("inside spawn") })
        .join()
        .unwrap_err();
    assert_eq!(e.message, "inside spawn");
    assert_eq!(s.spawn(|| 5).join().unwrap(), 5);
}

#[test]
fn reissued_node_runs_until_done() {
    let s = sched("single-pool", 2);
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    let mut g = TaskGraph::new();
    let root = g.add_reissuing(move || {
        if c.fetch_add(1, Ordering::SeqCst) < 9 {
            Step::Reissue
        } else {
            Step::Done
        }
    });
    let c2 = count.clone();
    let after = g.add(move || assert_eq!(c2.load(Ordering::SeqCst), 10));
    g.edge(root, after);
    s.submit(g).unwrap().wait().unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 10);
}

#[test]
fn context_is_inherited_by_nodes_and_nested_graphs() {
    let s = Arc::new(sched("single-pool", 2));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = s.clone();
    let seen2 = seen.clone();
    with_context(Some(TaskContext::new(String::from("txn-17"))), || {
        let mut g = TaskGraph::new();
        let seen3 = seen2.clone();
        let root = g.add(move || {
            seen3.lock().push(current::<String>().map(|s| (*s).clone()));
        });
        let seen4 = seen2.clone();
        let nested = g.add(move || {
            // A node spawns a graph; the spawned graph inherits the context too.
            let seen5 = seen4.clone();
            let mut inner = TaskGraph::new();
            inner.add(move || seen5.lock().push(current::<String>().map(|s| (*s).clone())));
            s2.submit(inner).unwrap().wait().unwrap();
            let (a, b) = maestro_scheduler::join(
                || current::<String>().map(|s| (*s).clone()),
                || current::<String>().map(|s| (*s).clone()),
            );
            seen4.lock().push(a);
            seen4.lock().push(b);
        });
        g.edge(root, nested);
        s.submit(g).unwrap().wait().unwrap();
    });
    let seen = seen.lock();
    assert_eq!(seen.len(), 4);
    assert!(
        seen.iter().all(|v| v.as_deref() == Some("txn-17")),
        "{seen:?}"
    );
    // The client thread's context was restored.
    assert!(current::<String>().is_none());
}

#[test]
fn higher_priority_roots_run_first() {
    // One worker, blocked by a gate while we queue roots of mixed priorities.
    let mut cfg = SchedulerConfig::single_pool().with_contexts(1);
    cfg.workers_max = 64;
    cfg.priority_bias = 1.0;
    let s = Scheduler::new(cfg).unwrap();
    let gate = Arc::new(maestro_scheduler::sync::Event::new());
    let g2 = gate.clone();
    let blocker = s.spawn(move || {
        // Spin-wait (not a scheduler-aware wait) so that no second worker is started.
        while !g2.is_set() {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    std::thread::sleep(Duration::from_millis(50));
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut handles = vec![];
    for (i, prio) in [0usize, 3, 1, 2, 3, 0].into_iter().enumerate() {
        let o = order.clone();
        handles.push(s.spawn_with_priority(prio, move || o.lock().push((prio, i))));
    }
    gate.set();
    blocker.join().unwrap();
    for h in handles {
        h.join().unwrap();
    }
    let prios: Vec<usize> = order.lock().iter().map(|p| p.0).collect();
    assert_eq!(prios, vec![3, 3, 2, 1, 0, 0]);
}

#[test]
fn stats_count_graph_nodes_and_json_exports() {
    let s = sched("single-hints", 2);
    let mut g = TaskGraph::new();
    let r = g.add(|| {});
    for _ in 0..10 {
        let n = g.add(|| {});
        g.edge(r, n);
    }
    s.submit(g).unwrap().wait().unwrap();
    let st = s.stats();
    assert_eq!(st.graphs_submitted, 1);
    assert_eq!(st.nodes_created, 11);
    assert!(st.tasks_executed >= 11);
    let v: serde_json::Value = serde_json::from_str(&s.report_json()).unwrap();
    assert_eq!(v["stats"]["nodes_created"], 11);
    assert!(v["timeline"].is_array());
}
