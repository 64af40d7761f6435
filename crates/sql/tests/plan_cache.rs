//! The plan cache (`plan_cache.rs`): a kept plan gives the answers planning
//! each execution gives, for seeded random parameter values of every
//! kind; statements whose plans depend on their values are planned per
//! execution; a table's change of definition, indexes or NULLs makes the
//! plan again.

mod common;

use common::{autocommit, scheduler};
use maestro_execution::{Executor, Granularity};
use maestro_sql::plan_cache::Outcome;
use maestro_sql::{Catalog, ParamValue, SqlError, Store};
use maestro_storage::column::Date;
use maestro_tpch::queries::Value;

/// A small deterministic generator (xorshift64*), seeded per test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> i64 {
        (self.next() % n) as i64
    }
}

fn store_with_rows() -> Store {
    let store = Store::new();
    autocommit(
        &store,
        "create table t (id bigint primary key, g integer not null, amount decimal(10,2) not null, \
         name varchar not null, day date not null, ts timestamp not null, note varchar)",
    );
    // Written out: the engine has no date + integer arithmetic.
    let rows: Vec<String> = (1..=600)
        .map(|i: i64| {
            let day = Date(18_262 + (i % 400) as i32);
            let note = if i % 5 == 0 {
                "NULL".to_string()
            } else {
                format!("'x{i}'")
            };
            format!(
                "({i}, {}, {}.{:02}, 'n{}', DATE '{day}', \
                 TIMESTAMP '2020-01-{:02} 00:00:00', {note})",
                i % 17,
                i * 37 % 1000 / 100,
                i * 37 % 100,
                i % 23,
                1 + i % 28
            )
        })
        .collect();
    autocommit(&store, &format!("insert into t values {}", rows.join(", ")));
    autocommit(&store, "create index t_g on t (g)");
    autocommit(
        &store,
        "create table u (g integer not null, v varchar not null)",
    );
    autocommit(
        &store,
        &format!(
            "insert into u values {}",
            (0..17)
                .map(|i| format!("({i}, 'v{}')", i % 3))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    store
}

type Answer = Result<Vec<Vec<Value>>, SqlError>;

/// `sql` with `params` planned through the store's cache and planned for
/// this execution alone, both run: (cached answer, uncached answer, what
/// the cache met).
fn both(store: &Store, sql: &str, params: &[ParamValue]) -> (Answer, Answer, Option<Outcome>) {
    let stmt = maestro_sql::parse(sql).unwrap();
    let mut txn = store.begin().unwrap();
    let view = store.view(&mut txn);
    let exec = Executor::new(scheduler(), Granularity::Static);
    let ctx = exec.context("plan cache");
    let run = |plan: &maestro_sql::LogicalPlan| {
        exec.run_plan(|| maestro_sql::lower::run(&ctx, &view, plan))
            .map(|r| r.rows)
    };
    let cache = view.plan_cache().expect("a store view has a plan cache");
    let (cached, outcome) = match cache.plan(&view, &stmt, params) {
        Ok((plan, _, outcome)) => (run(&plan), Some(outcome)),
        Err(e) => (Err(e), None),
    };
    let uncached = maestro_sql::plan_uncached(&view, &stmt, params).and_then(|(p, _)| run(&p));
    txn.abort();
    (cached, uncached, outcome)
}

fn int(v: i64) -> ParamValue {
    ParamValue::Int(v)
}

fn text(s: String) -> ParamValue {
    ParamValue::Str(s)
}

/// Statements, a generator of their parameters, and whether their plans
/// are kept (`false`: a value ends up folded, in a LIMIT or read with the
/// clock).
type Case = (&'static str, fn(&mut Rng) -> Vec<ParamValue>, bool);

const CASES: &[Case] = &[
    (
        "select id, amount from t where id = $1",
        |r| vec![int(r.below(700))],
        true,
    ),
    (
        "select count(*), sum(amount) from t where g = $1 and amount > $2",
        |r| {
            vec![
                int(r.below(17)),
                ParamValue::Num {
                    value: r.below(10_000),
                    scale: 2,
                },
            ]
        },
        true,
    ),
    (
        "select id from t where name = $1 order by id",
        |r| vec![text(format!("n{}", r.below(25)))],
        true,
    ),
    (
        "select id from t where day >= $1 and day < $2 order by id",
        |r| {
            let from = 18_262 + r.below(400) as i32;
            vec![
                ParamValue::Date(Date(from)),
                ParamValue::Date(Date(from + r.below(30) as i32)),
            ]
        },
        true,
    ),
    (
        "select id from t where g in ($1, $2, $3) and id < $4 order by id",
        |r| {
            vec![
                int(r.below(17)),
                int(r.below(17)),
                int(r.below(20)),
                int(r.below(700)),
            ]
        },
        true,
    ),
    (
        "select id + $1, name from t where id < 5 order by 1",
        |r| vec![int(r.below(100) - 50)],
        true,
    ),
    (
        "select count(*) from t where note is null and g = $1",
        |r| vec![int(r.below(17))],
        true,
    ),
    (
        "select id from t where ts < $1 and g = $2 order by id",
        |r| {
            vec![
                ParamValue::Timestamp(1_577_836_800_000_000 + r.below(90) * 86_400_000_000),
                int(r.below(17)),
            ]
        },
        true,
    ),
    (
        "select case when amount > $1 then name else $2 end from t where id = $3",
        |r| {
            vec![
                ParamValue::Num {
                    value: r.below(100),
                    scale: 0,
                },
                text(format!("else{}", r.below(3))),
                int(r.below(600)),
            ]
        },
        true,
    ),
    (
        "select t.id, u.v from t join u on t.g = u.g where u.v = $1 and t.id < $2 order by 1",
        |r| vec![text(format!("v{}", r.below(4))), int(r.below(200))],
        true,
    ),
    (
        "select id, note from t where note = $1 or id = $2 order by id",
        |r| {
            let note = if r.below(4) == 0 {
                ParamValue::Null(maestro_sql::types::SqlType::Str)
            } else {
                text(format!("x{}", r.below(600)))
            };
            vec![note, int(r.below(600))]
        },
        true,
    ),
    (
        "select id from t where name like $1 order by id",
        |r| {
            let pattern = match r.below(4) {
                0 => format!("n{}%", r.below(3)),
                1 => format!("%{}", r.below(10)),
                2 => format!("n_{}", r.below(10)),
                _ => format!("n{}", r.below(23)),
            };
            vec![text(pattern)]
        },
        true,
    ),
    // Arithmetic over parameters stays an expression in the kept plan and
    // is folded once the values are in (`optimize.rs`
    // `fold_parameter_arithmetic`), before the index choice
    // (`arithmetic_over_a_parameter_still_looks_up_an_index`).
    (
        "select id from t where g = $1 + 1 order by id",
        |r| vec![int(r.below(16))],
        true,
    ),
    (
        "select id, -$1 * amount, $2 - 1 from t where g = -$1 + 16 and id >= ($2 - 1) * 2 \
         order by id",
        |r| vec![int(r.below(17)), int(r.below(700))],
        true,
    ),
    (
        "select id from t where amount > $1 + 0.5 and g < 3 order by id",
        |r| {
            vec![ParamValue::Num {
                value: r.below(1_000),
                scale: 2,
            }]
        },
        true,
    ),
    // Where a statement needs a constant (an IN list's value, SUBSTRING's
    // position), the arithmetic is folded while binding: planned per
    // execution.
    (
        "select id from t where g in ($1 + 1, $1 + 2) order by id",
        |r| vec![int(r.below(16))],
        false,
    ),
    (
        "select substring(name from $1 + 1) from t where id = 7",
        |r| vec![int(r.below(3))],
        false,
    ),
    // Dates are not computed at run time: `$1 + INTERVAL` is folded.
    (
        "select count(*) from t where day < $1 + interval '10' day",
        |r| vec![ParamValue::Date(Date(18_262 + r.below(400) as i32))],
        false,
    ),
    (
        "select id from t order by id limit $1",
        |r| vec![int(r.below(5))],
        false,
    ),
    (
        "select id, now() > $1 from t where id = 1",
        |r| vec![ParamValue::Timestamp(r.below(1_000))],
        false,
    ),
];

#[test]
fn kept_plans_answer_as_planning_each_execution() {
    let store = store_with_rows();
    let seed = 0x5eed_0001_u64;
    let mut rng = Rng(seed);
    for (sql, params_of, kept) in CASES {
        let mut outcomes = Vec::new();
        for round in 0..25 {
            let params = params_of(&mut rng);
            let (cached, uncached, outcome) = both(&store, sql, &params);
            match (&cached, &uncached) {
                (Ok(a), Ok(b)) => assert_eq!(
                    a, b,
                    "{sql} with {params:?} (round {round}, seed {seed:#x}): kept plan's answer"
                ),
                (Err(a), Err(b)) => assert_eq!(a.kind, b.kind, "{sql}: {a} / {b}"),
                _ => panic!("{sql} with {params:?}: {cached:?} against {uncached:?}"),
            }
            outcomes.push(outcome.expect("planned"));
        }
        assert_eq!(outcomes[0], Outcome::Seen, "{sql}");
        if *kept {
            // NULL parameters are a shape of their own: seen and kept
            // once more.
            let hits = outcomes.iter().filter(|o| **o == Outcome::Hit).count();
            assert!(hits >= 15, "{sql}: {outcomes:?}");
        } else {
            assert!(
                outcomes[1..].iter().all(|o| *o == Outcome::NotKept),
                "{sql}: {outcomes:?}"
            );
        }
    }
}

#[test]
fn a_changed_table_makes_the_plan_again() {
    let store = store_with_rows();
    let sql = "select * from t where g = $1 and id < 40 order by id";
    let check = |expected: Outcome| {
        let (cached, uncached, outcome) = both(&store, sql, &[int(3)]);
        assert_eq!(cached.unwrap(), uncached.unwrap());
        assert_eq!(outcome, Some(expected));
    };
    check(Outcome::Seen);
    check(Outcome::Kept);
    check(Outcome::Hit);
    // An index dropped: the kept plan chose none (index scans are chosen
    // per execution), but the indexes are part of the table's token.
    autocommit(&store, "drop index t_g");
    check(Outcome::Kept);
    check(Outcome::Hit);
    // A column added: `*` reads it.
    autocommit(&store, "alter table t add column extra integer");
    check(Outcome::Kept);
    let (cached, _, _) = both(&store, sql, &[int(3)]);
    assert_eq!(cached.unwrap()[0].len(), 8);
    // A first NULL in a column planned as holding none.
    autocommit(&store, "create table w (k integer not null, x integer)");
    autocommit(&store, "insert into w values (1, 10), (1, 20), (2, 30)");
    let counted = "select count(x), count(*) from w where k = $1";
    let count = || {
        let (cached, uncached, outcome) = both(&store, counted, &[int(1)]);
        let cached = cached.unwrap();
        assert_eq!(cached, uncached.unwrap());
        (cached, outcome.unwrap())
    };
    assert_eq!(count().1, Outcome::Seen);
    assert_eq!(count().1, Outcome::Kept);
    assert_eq!(count().1, Outcome::Hit);
    autocommit(&store, "insert into w values (1, NULL)");
    let (rows, outcome) = count();
    assert_eq!(outcome, Outcome::Kept, "a NULL appeared: planned again");
    assert_eq!(rows, vec![vec![Value::Int(2), Value::Int(3)]]);
}

/// A multi-row INSERT of parameters runs each row as the same statement
/// (`$1, $2` of that row's values): from its second row on every row hits
/// one kept plan, where a statement per row position would keep three.
#[test]
fn rows_of_parameters_share_one_plan() {
    let store = Store::new();
    autocommit(
        &store,
        "create table p (a bigint not null, b varchar not null)",
    );
    let stmt = maestro_sql::parse("insert into p values ($1, $2), ($3, $4), ($5, $6)").unwrap();
    let exec = Executor::new(scheduler(), Granularity::Static);
    let ctx = exec.context("plan cache");
    let run = |c: &dyn Catalog, p: &maestro_sql::LogicalPlan| {
        exec.run_plan(|| maestro_sql::lower::run(&ctx, c, p))
    };
    let before = store.plan_cache_stats();
    for round in 0..3 {
        let params: Vec<ParamValue> = (0..3)
            .flat_map(|i| [int(round * 3 + i), text(format!("r{round}-{i}"))])
            .collect();
        let mut txn = store.begin().unwrap();
        store
            .execute_returning(&mut txn, &stmt, &params, &run)
            .expect("a write")
            .unwrap();
        store.commit(txn).unwrap();
    }
    let after = store.plan_cache_stats();
    // 9 rows: the first seen, the second kept, the other 7 from the cache.
    assert_eq!(after.hits - before.hits, 7, "{after:?}");
    let (rows, _, _) = both(&store, "select count(*), sum(a) from p", &[]);
    assert_eq!(rows.unwrap(), vec![vec![Value::Int(9), Value::Int(36)]]);
    let (rows, _, _) = both(&store, "select a from p where b = 'r1-2'", &[]);
    assert_eq!(rows.unwrap(), vec![vec![Value::Int(5)]]);
}

/// The scanned tables' index lookups of `plan`, as (index, lookup) text.
fn index_lookups(plan: &maestro_sql::plan::Plan, out: &mut Vec<String>) {
    if let maestro_sql::plan::Plan::Scan {
        index: Some(ix), ..
    } = plan
    {
        out.push(format!("{} {:?}", ix.name, ix.lookup));
    }
    for c in plan.children() {
        index_lookups(c, out);
    }
}

/// Arithmetic over a parameter is one constant by the time the index scans
/// are chosen, in a kept plan and in one planned per execution: the lookup
/// in `t_id` reads the row of `id = 8`, not every row.
#[test]
fn arithmetic_over_a_parameter_still_looks_up_an_index() {
    let store = store_with_rows();
    autocommit(&store, "create index t_id on t (id)");
    // The rows into the main: an index covers the main's rows.
    store
        .merge_deltas(maestro_sql::store::MergeScope::All)
        .unwrap();
    let stmt = maestro_sql::parse("select g from t where id = $1 + 1").unwrap();
    let mut txn = store.begin().unwrap();
    let view = store.view(&mut txn);
    let cache = view.plan_cache().expect("a store view has a plan cache");
    let mut outcomes = Vec::new();
    for value in [7, 7, 7, 12] {
        let (plan, _, outcome) = cache.plan(&view, &stmt, &[int(value)]).unwrap();
        outcomes.push(outcome);
        let mut lookups = Vec::new();
        index_lookups(&plan.root, &mut lookups);
        assert_eq!(lookups.len(), 1, "{outcome:?}: {:#?}", plan.root);
        assert!(
            lookups[0].contains(&format!("value: {},", value + 1)),
            "{outcome:?}: {lookups:?}"
        );
    }
    assert_eq!(
        outcomes,
        [Outcome::Seen, Outcome::Kept, Outcome::Hit, Outcome::Hit]
    );
    txn.abort();
}
