//! Hot-spot runs: every transaction of the mix is funnelled into district 1
//! of one warehouse, half the Payments and Order-Status into 10 customers,
//! and a quarter of the New-Orders roll back, so transactions on one district
//! or customer overlap with rollbacks and deadlock victims all the time — the
//! interleavings where a missing lock or a wrong undo image loses an update
//! (the standard mix makes them rare). Afterwards: consistency conditions and
//! the audit invariants of `common::audit`. Seeded (`TPCC_SEED=…`).

mod common;

use maestro_scheduler::Scheduler;
use maestro_tpcc::driver::Audit;
use maestro_tpcc::lock::LockManager;
use maestro_tpcc::txn::*;
use maestro_tpcc::*;

use common::audit::{check_audit, check_orders, totals};
use common::seed;

const THREADS: u64 = 8;
const PER_THREAD: usize = 1500;
/// Percent of New-Orders whose last item is made unused (rolled back).
const ROLLBACK_PERCENT: u64 = 25;

/// Customers most Payments and Order-Status meet on.
const HOT_CUSTOMERS: u16 = 10;

/// Half the time one of the first [`HOT_CUSTOMERS`], so Payments of one
/// customer overlap often (they wait for each other, and a deadlock victim
/// rolls back what it updated).
fn hot_customer(given: CustomerSelector, rng: &mut fastrand::Rng) -> CustomerSelector {
    if rng.bool() {
        CustomerSelector::Id(rng.u16(1..=HOT_CUSTOMERS))
    } else {
        given
    }
}

/// The next input of the mix, moved into district 1.
fn hot_input(inputs: &mut InputGenerator, rng: &mut fastrand::Rng) -> TxnInput {
    let mut input = inputs.next_input();
    match &mut input {
        TxnInput::NewOrder(n) => {
            n.d_id = 1;
            if rng.u64(..100) < ROLLBACK_PERCENT {
                let last = usize::from(n.ol_cnt) - 1;
                n.lines[last].i_id = UNUSED_ITEM_ID;
            }
        }
        TxnInput::Payment(p) => {
            (p.d_id, p.c_d_id) = (1, 1);
            p.customer = hot_customer(p.customer, rng);
        }
        TxnInput::OrderStatus(o) => {
            o.d_id = 1;
            o.customer = hot_customer(o.customer, rng);
        }
        TxnInput::StockLevel(s) => s.d_id = 1,
        TxnInput::Delivery(_) => {}
    }
    input
}

/// What a committed transaction did, added to `audit`.
fn account(audit: &mut Audit, input: &TxnInput, done: &Executed) {
    let Outcome::Committed(output) = &done.outcome else {
        return;
    };
    match (input, output) {
        (TxnInput::Payment(p), _) => {
            audit.payments += 1;
            audit.payment_amount += p.h_amount;
        }
        (TxnInput::NewOrder(n), _) => {
            audit.new_orders += 1;
            audit.order_lines += n.lines().len() as u64;
            audit.ordered_quantity += n.lines().iter().map(|l| u64::from(l.quantity)).sum::<u64>();
        }
        (_, TxnOutput::Delivery { delivered }) => {
            audit.delivered_orders += delivered.iter().flatten().count() as u64;
        }
        _ => {}
    }
}

/// Runs the hot mix on `THREADS` threads, each transaction through `run`
/// (in place or as a scheduler task); checks everything afterwards.
fn hot_run(run: &(dyn Fn(&mut (dyn FnMut() -> Executed + Send)) -> Executed + Sync)) {
    let seed = seed();
    let mut config = LoadConfig::new(1);
    config.seed = seed;
    let (db, loaded) = load(&config, &|_| {}).unwrap();
    let constants =
        NuRandConstants::for_run(&loaded.constants, &mut fastrand::Rng::with_seed(seed));
    let locks = LockManager::new();
    let before = totals(&db);
    let (audit, victims) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (db, locks) = (&db, &locks);
                s.spawn(move || {
                    let stream = seed ^ ((t + 1) * 0x9E37_79B9);
                    let mut inputs = InputGenerator::new(TpccRng::new(stream, constants), 1, 1, 1);
                    let mut rng = fastrand::Rng::with_seed(stream);
                    let (mut audit, mut victims) = (Audit::default(), 0);
                    let mut state = TxnState::default();
                    for _ in 0..PER_THREAD {
                        let input = hot_input(&mut inputs, &mut rng);
                        let done = run(&mut || execute(db, locks, &mut state, &input).unwrap());
                        victims += u64::from(done.deadlock_aborts);
                        account(&mut audit, &input, &done);
                    }
                    (audit, victims)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).fold(
            (Audit::default(), 0),
            |(mut sum, d), (a, victims)| {
                sum.payments += a.payments;
                sum.payment_amount += a.payment_amount;
                sum.new_orders += a.new_orders;
                sum.order_lines += a.order_lines;
                sum.ordered_quantity += a.ordered_quantity;
                sum.delivered_orders += a.delivered_orders;
                (sum, d + victims)
            },
        )
    });
    eprintln!("{audit:?}, {victims} victims, {:?}", locks.stats());
    assert_eq!(locks.locks_in_use(), 0, "seed {seed}: locks left behind");
    let violations = check_consistency(&db);
    assert!(violations.is_empty(), "seed {seed}: {violations:?}");
    check_audit(&before, &totals(&db), &audit, seed);
    check_orders(&db, seed);
}

#[test]
fn one_hot_district_on_threads() {
    hot_run(&|txn| txn());
}

#[test]
fn one_hot_district_as_scheduler_tasks() {
    let scheduler = Scheduler::with_preset("single-pool", 2).unwrap();
    hot_run(&|txn| scheduler.install(txn));
}
