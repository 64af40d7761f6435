//! Admission control per workload class (`admission.rs`): the queue is
//! bounded and FIFO, a full queue and an overload reject with a retryable
//! error, waiting statements are admitted as statements end or as the load
//! falls, and every statement ends admitted or rejected (counted).
//! Event-based: deadlines only turn a hang into a failure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::{
    AdmissionLimits, ClassId, ClassSpec, DEFAULT_PRIORITY, RejectReason, Scheduler, SchedulerConfig,
};

const HANG_DEADLINE: Duration = Duration::from_secs(120);

fn until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + HANG_DEADLINE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn counts(s: &Scheduler, c: ClassId) -> maestro_scheduler::AdmissionCounts {
    s.class_stats()[c.index()].admission
}

#[test]
fn a_full_queue_rejects_and_waiters_are_admitted_in_order_as_statements_end() {
    let s = Scheduler::new(SchedulerConfig::single_pool().with_contexts(2)).unwrap();
    let olap = s
        .define_class(&ClassSpec {
            admission: Some(AdmissionLimits {
                queue_max: 1,
                queue_wait_max: HANG_DEADLINE,
                // The load plays no part here.
                queue_above_load: 1e9,
                reject_above_load: 1e9,
                ..AdmissionLimits::new(1)
            }),
            ..ClassSpec::new("olap", 1)
        })
        .unwrap();
    let first = s.admit(olap).unwrap();
    std::thread::scope(|t| {
        let waiter = t.spawn(|| {
            let admitted = s.admit(olap).map(|_| ());
            admitted.is_ok()
        });
        until("the second statement queued", || {
            counts(&s, olap).waiting == 1
        });
        let full = s.admit(olap).unwrap_err();
        assert!(full.is_retryable());
        assert_eq!(full.reason, RejectReason::QueueFull { queue_max: 1 });
        assert!(full.to_string().contains("olap") && full.to_string().contains("retryable"));
        drop(first);
        assert!(
            waiter.join().unwrap(),
            "the queued statement was not admitted"
        );
    });
    let c = counts(&s, olap);
    assert_eq!((c.admitted, c.queued, c.rejected), (2, 1, 1));
    assert_eq!((c.running, c.waiting), (0, 0));
    // A class without limits (and the default class) is admitted at once.
    let free = s.define_class(&ClassSpec::new("oltp", 4)).unwrap();
    drop(s.admit(free).unwrap());
    drop(s.admit(ClassId::DEFAULT).unwrap());
}

#[test]
fn overload_rejects_and_a_falling_load_admits_the_queue() {
    let mut config = SchedulerConfig::single_pool().with_contexts(2);
    config.admission_sample = Duration::from_millis(20);
    let s = Arc::new(Scheduler::new(config).unwrap());
    let limits = AdmissionLimits {
        queue_wait_max: HANG_DEADLINE,
        queue_above_load: 0.5,
        reject_above_load: 2.0,
        ..AdmissionLimits::new(8)
    };
    let olap = s
        .define_class(&ClassSpec {
            admission: Some(limits),
            ..ClassSpec::new("olap", 1)
        })
        .unwrap();
    // Tasks that hold a worker until their gate opens.
    let finished = Arc::new(AtomicUsize::new(0));
    let gated = |n: usize, gate: &Arc<AtomicBool>| {
        for _ in 0..n {
            let (gate, finished) = (gate.clone(), finished.clone());
            s.spawn_detached(DEFAULT_PRIORITY, move || {
                while !gate.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                finished.fetch_add(1, Ordering::SeqCst);
            });
        }
    };
    // Overload: both contexts busy and a backlog of queued roots.
    let overload = Arc::new(AtomicBool::new(false));
    gated(12, &overload);
    until("the load at the reject threshold", || {
        s.admission_load() >= 2.0
    });
    match s.admit(olap) {
        Err(r) => assert!(
            matches!(r.reason, RejectReason::Overloaded { load } if load >= 2.0),
            "{r}"
        ),
        Ok(_) => panic!("admitted at load {}", s.admission_load()),
    }
    overload.store(true, Ordering::SeqCst);
    // Both contexts busy, no backlog: a load of 1, between the thresholds.
    let busy = Arc::new(AtomicBool::new(false));
    until("the overload drained", || {
        finished.load(Ordering::SeqCst) == 12
    });
    gated(2, &busy);
    until("the load between the thresholds", || {
        (0.5..2.0).contains(&s.admission_load())
    });
    std::thread::scope(|t| {
        let waiter = t.spawn(|| s.admit(olap).map(|_| ()).is_ok());
        until("the statement queued", || counts(&s, olap).waiting == 1);
        busy.store(true, Ordering::SeqCst);
        assert!(waiter.join().unwrap(), "not admitted after the load fell");
    });
    let c = counts(&s, olap);
    assert_eq!((c.admitted, c.queued, c.rejected), (1, 1, 1));
}

#[test]
fn invalid_limits_are_refused() {
    let s = Scheduler::new(SchedulerConfig::single_pool().with_contexts(2)).unwrap();
    let bad = ClassSpec {
        admission: Some(AdmissionLimits {
            queue_above_load: 3.0,
            reject_above_load: 2.0,
            ..AdmissionLimits::new(1)
        }),
        ..ClassSpec::new("bad", 1)
    };
    let err = s.define_class(&bad).unwrap_err();
    assert!(err.to_string().contains("admission"), "{err}");
    let mut config = SchedulerConfig::single_pool().with_contexts(2);
    config.admission_lambda = 0.0;
    assert!(Scheduler::new(config).is_err());
}

/// The memory signal: statements' charges against `memory_budget_bytes`,
/// smoothed by the watchdog; above the reject threshold new statements of a
/// class with limits are rejected (retryable, the reason names memory), and
/// once the charging statement ends and the average falls they are admitted.
#[test]
fn charged_memory_above_the_budget_rejects_until_it_is_released() {
    let mut config = SchedulerConfig::single_pool().with_contexts(2);
    config.memory_budget_bytes = Some(1_000_000);
    config.admission_sample = Duration::from_millis(5);
    config.admission_lambda = 1.0; // the newest sample only: no slow decay
    let s = Scheduler::new(config).unwrap();
    let olap = s
        .define_class(&ClassSpec {
            admission: Some(AdmissionLimits {
                queue_above_load: 1e9,
                reject_above_load: 1e9,
                queue_wait_max: Duration::from_millis(1),
                ..AdmissionLimits::new(8)
            }),
            ..ClassSpec::new("olap", 1)
        })
        .unwrap();
    assert_eq!(s.admission_memory_load(), Some(0.0));
    let token = s.statement_token(olap, None);
    token.charge(990_000).unwrap();
    until("the memory load above the reject threshold", || {
        s.admission_memory_load().is_some_and(|m| m >= 0.95)
    });
    let rejected = s.admit(olap).unwrap_err();
    assert!(rejected.is_retryable());
    assert!(
        matches!(rejected.reason, RejectReason::MemoryOverloaded { memory } if memory >= 0.95),
        "{rejected}"
    );
    assert!(rejected.to_string().contains("memory budget"), "{rejected}");
    drop(token);
    until("the memory load back below the queue threshold", || {
        s.admission_memory_load().is_some_and(|m| m < 0.8)
    });
    assert!(s.admit(olap).is_ok());
}

#[test]
fn without_a_budget_there_is_no_memory_signal() {
    let s = Scheduler::new(SchedulerConfig::single_pool().with_contexts(2)).unwrap();
    assert_eq!(s.admission_memory_load(), None);
}
