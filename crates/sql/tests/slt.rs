//! The sqllogictest conformance suite: every `.slt` file under `tests/slt/`
//! run against the SQL engine directly (no wire protocol), on the SF 0.01
//! TPC-H tables (loaded once for all files). One test per file.
//!
//! Output conventions: integers as digits, decimals with their scale's
//! digits, doubles in their shortest round-trip form, dates `YYYY-MM-DD`,
//! booleans `true`/`false`, NULL as `NULL`, the empty string as `(empty)`.
//! Column types: `I` integer, `R` decimal or double, `T` anything else.
//!
//! Tables live in a [`Store`] per file (the TPC-H tables put in first), so
//! files can create, change and drop tables: a write answers its row count
//! (CREATE/DROP: 0), BEGIN/COMMIT/ROLLBACK run one transaction (an error in
//! it rolls it back), every other statement autocommits.
//!
//! Parameters: a statement whose first line is `-- params: v1 | v2 | …`
//! is described first (each `$n` gets its inferred type), then each text
//! value is parsed as that type (`NULL` is NULL) and bound, as a wire
//! protocol's Parse/Describe/Bind would.

mod common;

use std::path::Path;

use common::{db, scheduler};
use maestro_execution::{Executor, Granularity};
use maestro_sql::store::Written;
use maestro_sql::{Catalog, ErrorKind, Explain, LogicalPlan, ParamValue, SqlError, Store};
use maestro_tpch::queries::{ColumnType, QueryResult, Value, format_double};
use maestro_txn::Transaction;
use sqllogictest::{DB, DBOutput, DefaultColumnType, Record, Runner, strict_column_validator};
use sqlparser::ast::Statement;

struct Maestro {
    exec: Executor,
    store: Store,
    /// The open transaction (BEGIN … COMMIT/ROLLBACK).
    txn: Option<Transaction>,
}

fn tpch_store() -> Store {
    let store = Store::new();
    store.put_tpch(db()).expect("the TPC-H tables go in");
    store
}

/// `-- params: a | b` on the first line: the statement and the texts.
fn split_params(sql: &str) -> (&str, Option<Vec<&str>>) {
    let first = sql.lines().next().unwrap_or("");
    match first.trim().strip_prefix("-- params:") {
        Some(list) => (
            &sql[first.len()..],
            Some(list.split('|').map(str::trim).collect()),
        ),
        None => (sql, None),
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Decimal { value, scale: 0 } => value.to_string(),
        Value::Decimal { value, scale } => {
            let unit = 10u128.pow(u32::from(*scale));
            let sign = if *value < 0 { "-" } else { "" };
            let abs = value.unsigned_abs();
            format!(
                "{sign}{}.{:0w$}",
                abs / unit,
                abs % unit,
                w = usize::from(*scale)
            )
        }
        Value::Double(d) => format_double(*d),
        Value::Str(s) if s.is_empty() => "(empty)".to_string(),
        other => other.to_text(),
    }
}

fn column_type(t: &ColumnType) -> DefaultColumnType {
    match t {
        ColumnType::Int => DefaultColumnType::Integer,
        ColumnType::Decimal(_) | ColumnType::Double => DefaultColumnType::FloatingPoint,
        _ => DefaultColumnType::Text,
    }
}

impl DB for Maestro {
    type Error = SqlError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SqlError> {
        let done = Ok(DBOutput::StatementComplete(0));
        match maestro_sql::parse(split_params(sql).0) {
            Ok(Statement::StartTransaction { .. }) => {
                if self.txn.is_none() {
                    self.txn = Some(self.store.begin()?);
                }
                return done;
            }
            Ok(Statement::Commit { .. }) => {
                if let Some(t) = self.txn.take() {
                    self.store.commit(t)?;
                }
                return done;
            }
            Ok(Statement::Rollback { .. }) => {
                self.txn = None;
                return done;
            }
            _ => {}
        }
        let explicit = self.txn.is_some();
        let mut txn = match self.txn.take() {
            Some(t) => t,
            None => self.store.begin()?,
        };
        let out = self.run_in(&mut txn, sql);
        match (&out, explicit) {
            (Ok(_), true) => self.txn = Some(txn),
            (Ok(_), false) => self.store.commit(txn)?,
            (Err(_), _) => txn.abort(),
        }
        out
    }
}

impl Maestro {
    fn run_in(
        &mut self,
        txn: &mut Transaction,
        sql: &str,
    ) -> Result<DBOutput<DefaultColumnType>, SqlError> {
        let ctx = self.exec.context("SLT");
        let exec = &self.exec;
        let run = |catalog: &dyn Catalog, plan: &LogicalPlan| -> Result<QueryResult, SqlError> {
            exec.run_plan(|| maestro_sql::lower::run(&ctx, catalog, plan))
        };
        let (sql, texts) = split_params(sql);
        if texts.is_none() {
            let stmt = maestro_sql::parse(sql)?;
            if let Some(written) = self.store.execute(txn, &stmt, &[], &run) {
                return Ok(DBOutput::StatementComplete(match written? {
                    Written::CreateTable
                    | Written::DropTable
                    | Written::CreateIndex
                    | Written::DropIndex
                    | Written::AlterTable => 0,
                    Written::CreateTableAs(n)
                    | Written::Insert(n)
                    | Written::Update(n)
                    | Written::Delete(n)
                    | Written::Copy(n)
                    // A locking query run as a statement (its rows dropped).
                    | Written::Select(n) => n,
                }));
            }
        }
        let catalog = self.store.view(txn);
        let values = match texts {
            None => Vec::new(),
            Some(texts) => {
                let d = maestro_sql::describe(&catalog, sql, &[])?;
                if texts.len() != d.param_types.len() {
                    return Err(SqlError::new(
                        ErrorKind::UndefinedParameter,
                        format!(
                            "{} values given, the statement has {} parameters",
                            texts.len(),
                            d.param_types.len()
                        ),
                    ));
                }
                texts
                    .iter()
                    .zip(&d.param_types)
                    .map(|(t, ty)| match *t {
                        "NULL" => Ok(ParamValue::Null(*ty)),
                        t => ParamValue::parse(t, *ty),
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        let (plan, explain) = maestro_sql::plan_with(&catalog, sql, &values)?;
        if explain == Explain::Analyze {
            return Err(SqlError::unsupported(
                "EXPLAIN ANALYZE in a .slt file (its times vary; tests/explain.rs checks it)",
            ));
        }
        if explain == Explain::Plan {
            return Ok(DBOutput::Rows {
                types: vec![DefaultColumnType::Text],
                rows: plan
                    .explain()
                    .lines()
                    .map(|l| vec![l.to_string()])
                    .collect(),
            });
        }
        let result = run(&catalog, &plan)?;
        Ok(DBOutput::Rows {
            types: result.columns.iter().map(|c| column_type(&c.1)).collect(),
            rows: result
                .rows
                .iter()
                .map(|r| r.iter().map(cell).collect())
                .collect(),
        })
    }
}

/// A runner whose database is a fresh store with the TPC-H tables.
fn runner() -> Runner<Maestro, impl sqllogictest::MakeConnection<Conn = Maestro>> {
    let mut runner = Runner::new(|| async {
        Ok(Maestro {
            // Small tasks, so SF 0.01 splits into several per operator.
            exec: Executor::new(scheduler(), Granularity::Static).with_min_rows_per_task(1024),
            store: tpch_store(),
            txn: None,
        })
    });
    runner.with_column_validator(strict_column_validator);
    runner
}

fn run(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/slt")
        .join(file);
    let mut runner = runner();
    if let Err(e) = runner.run_file(&path) {
        panic!("{}", e.display(true));
    }
}

/// Known bugs: `tests/slt/known_bugs.slt` holds records whose expectation is
/// right (checked against DuckDB and PostgreSQL's semantics by
/// `tests/slt_duckdb.py`) but whose answer from Maestro is wrong. Each of them
/// must FAIL here, one by one, so the suite stays green while the bug stays
/// visible; when a fix makes one pass, this test fails and the record moves
/// back to its topic's file.
#[test]
fn known_bugs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slt/known_bugs.slt");
    let mut runner = runner();
    let records = sqllogictest::parse_file::<DefaultColumnType>(&path)
        .unwrap_or_else(|e| panic!("known_bugs.slt: {e}"));
    let mut checked = 0;
    for record in records {
        let line = match &record {
            Record::Statement { loc, .. } | Record::Query { loc, .. } => loc.line(),
            // Comments, blank lines and the like: nothing to run.
            _ => continue,
        };
        checked += 1;
        match runner.run(record) {
            // Shown with `--nocapture`.
            Err(e) => eprintln!("known bug, fails as expected: {}\n", e.display(false)),
            Ok(_) => panic!(
                "known_bugs.slt:{line} passes now: the bug is fixed, move the record \
                 to its topic's .slt file"
            ),
        }
    }
    // No records is fine (no known bug); but then the file must really have
    // none, not records the parser skipped.
    if checked == 0 {
        let text = std::fs::read_to_string(&path).expect("known_bugs.slt");
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("statement") || l.starts_with("query")),
            "known_bugs.slt has records this test did not run"
        );
    }
}

macro_rules! slt {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run(concat!(stringify!($name), ".slt"));
            }
        )*
        /// The files the tests above run.
        const LISTED: &[&str] = &[$(concat!(stringify!($name), ".slt")),*];
    };
}

/// A `.slt` file nobody lists would never run: every file in `tests/slt/`
/// is one of the tests above (or the known bugs, run by their own test).
#[test]
fn every_slt_file_is_listed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let mut unlisted = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/slt") {
        let name = entry.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".slt") && name != "known_bugs.slt" && !LISTED.contains(&&*name) {
            unlisted.push(name.to_string());
        }
    }
    assert!(
        unlisted.is_empty(),
        "add {unlisted:?} to the slt! list in tests/slt.rs"
    );
}

slt!(
    types,
    nulls,
    arithmetic,
    division,
    casts,
    predicates,
    dates,
    timestamps,
    aggregates,
    grouping,
    ordering,
    joins,
    subqueries,
    with_queries,
    parameters,
    errors,
    ddl,
    dml,
    transactions,
    indexes,
    stored_nulls,
    alter,
    series,
);
