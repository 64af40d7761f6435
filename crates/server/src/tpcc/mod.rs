//! TPC-C on the SQL store: the five transactions as SQL statements on the
//! [`Engine`] — the main + delta column tables every SQL table lives in,
//! snapshot isolation with row locks on write, background merges — so the
//! store that serves TPC-H and CH's analytical queries runs the
//! transactions too (issue 16, "one storage"). `maestro tpcc run --cc sql`.
//!
//! The tables are CH-benCHmark's TPC-C tables as `CALL maestro.load_ch`
//! puts them (loaded by the row loader, copied into the store at one
//! snapshot) with `orders` dropped (its copy `oorder`, BenchBase's name, is
//! the one the CH queries read and these transactions write) and one-column
//! indexes on the columns the statements look rows up by ([`INDEXES`]).
//!
//! A transaction is one SQL transaction at the configured isolation
//! ([`Isolation`]; REPEATABLE READ = snapshot isolation by default, as the
//! MVCC row engine); a write-write conflict (40001), a deadlock (40P01) or a
//! row held past the wait bound (55P03) aborts it and it runs again from its
//! first statement, counted as a retry, at most [`CONFLICT_RETRIES_MAX`]
//! times.

mod check;
mod statements;
mod transactions;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use maestro_scheduler::{CancelReason, CancelToken, Cancelled};
use maestro_sql::{ErrorKind, ParamValue, SqlError, Statement, Written};
use maestro_tpcc::TpccError;
use maestro_tpcc::driver::TxnEngine;
use maestro_tpcc::random::NuRandConstants;
use maestro_tpcc::txn::{Executed, Outcome, TxnInput, TxnOutput};
use maestro_tpch::queries::Value;

pub use check::check_consistency;

use crate::txn::{Isolation, TxnSlot};
use crate::{Answer, Engine};
use statements::Statements;

/// The indexes the statements look rows up by: `(index, table, column)`.
/// One column each (the store has no multi-column indexes); the most
/// selective column of each lookup, the rest of its key filtered.
pub const INDEXES: [(&str, &str, &str); 8] = [
    ("customer_c_id", "customer", "c_id"),
    ("customer_c_last", "customer", "c_last"),
    ("stock_s_i_id", "stock", "s_i_id"),
    ("item_i_id", "item", "i_id"),
    ("oorder_o_id", "oorder", "o_id"),
    ("oorder_o_c_id", "oorder", "o_c_id"),
    ("order_line_ol_o_id", "order_line", "ol_o_id"),
    ("new_order_no_o_id", "new_order", "no_o_id"),
];

/// Times one transaction runs again after conflicts before the run stops
/// with an error (guessed: far above what a hot row at W = 1 with 16
/// terminals needs, so hitting it means something is stuck).
pub const CONFLICT_RETRIES_MAX: u32 = 10_000;

/// The five transactions on an [`Engine`]'s store.
pub struct SqlTpcc {
    engine: Arc<Engine>,
    warehouses: u16,
    isolation: Isolation,
    statements: Statements,
}

/// What loading put into the store.
pub struct SqlLoad {
    /// The load's NURand constants (the run's derive from them).
    pub constants: NuRandConstants,
    /// Rows of the TPC-C tables loaded.
    pub rows: u64,
}

impl SqlTpcc {
    /// Loads TPC-C with `warehouses` (CH-benCHmark's tables, `seed`) into
    /// `engine`'s store, replacing tables of those names, and creates the
    /// [`INDEXES`].
    pub fn load(
        engine: Arc<Engine>,
        warehouses: u16,
        seed: u64,
        isolation: Isolation,
    ) -> Result<(SqlTpcc, SqlLoad), String> {
        if warehouses == 0 {
            return Err("TPC-C needs at least 1 warehouse".into());
        }
        let config = maestro_ch::ChConfig {
            warehouses,
            seed,
            clock_start: None,
        };
        let (db, report) =
            maestro_ch::ChDatabase::load(&config, &|_| {}).map_err(|e| e.to_string())?;
        // The row copy is dropped on return, before any run.
        let tpcc = SqlTpcc::from_ch(engine, &db, isolation)?;
        let load = SqlLoad {
            constants: report.constants,
            rows: report.counts.total(),
        };
        Ok((tpcc, load))
    }

    /// The transactions on a copy of `db`'s tables as one snapshot sees
    /// them, put into `engine`'s store (tables of those names replaced),
    /// with the [`INDEXES`].
    pub fn from_ch(
        engine: Arc<Engine>,
        db: &maestro_ch::ChDatabase,
        isolation: Isolation,
    ) -> Result<SqlTpcc, String> {
        {
            let snap = db.snapshot().map_err(|e| e.to_string())?;
            engine.put_ch(&snap)?;
        }
        let tpcc = SqlTpcc::open(engine, db.tpcc.warehouses(), isolation)?;
        tpcc.ddl("DROP TABLE IF EXISTS orders")?;
        for (name, table, column) in INDEXES {
            tpcc.ddl(&format!("CREATE INDEX {name} ON {table} ({column})"))?;
        }
        Ok(tpcc)
    }

    /// The transactions on tables already in `engine`'s store (loaded by
    /// [`SqlTpcc::load`] or `CALL maestro.load_ch`).
    pub fn open(
        engine: Arc<Engine>,
        warehouses: u16,
        isolation: Isolation,
    ) -> Result<SqlTpcc, String> {
        let statements = Statements::parse().map_err(|e| e.to_string())?;
        Ok(SqlTpcc {
            engine,
            warehouses,
            isolation,
            statements,
        })
    }

    /// The engine the transactions run on.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn ddl(&self, sql: &str) -> Result<(), String> {
        let mut slot = TxnSlot::Idle;
        self.engine
            .execute(sql, &[], CancelToken::new(), &mut slot)
            .map(|_| ())
            .map_err(|e| format!("{sql}: {e}"))
    }

    /// One attempt of `input`: its statements, then COMMIT.
    fn attempt(&self, input: &TxnInput, cancel: &CancelToken) -> Result<TxnOutput, Failure> {
        let mut t = Txn {
            tpcc: self,
            slot: TxnSlot::Begun(self.isolation),
            cancel: cancel.clone(),
        };
        let out = match input {
            TxnInput::NewOrder(i) => transactions::new_order(&mut t, i),
            TxnInput::Payment(i) => transactions::payment(&mut t, i),
            TxnInput::OrderStatus(i) => transactions::order_status(&mut t, i),
            TxnInput::Delivery(i) => transactions::delivery(&mut t, i),
            TxnInput::StockLevel(i) => transactions::stock_level(&mut t, i),
        };
        match out {
            Ok(out) => t.commit().map(|()| out),
            Err(e) => {
                t.abort();
                Err(e)
            }
        }
    }
}

impl TxnEngine for SqlTpcc {
    fn warehouses(&self) -> u16 {
        self.warehouses
    }

    fn execute(
        &self,
        input: &TxnInput,
        cancel: Option<&CancelToken>,
    ) -> Result<Executed, TpccError> {
        let token = cancel.cloned().unwrap_or_default();
        let mut retries = 0u32;
        loop {
            if let Some(reason) = token.reason() {
                return Err(TpccError::Cancelled(Cancelled { reason }));
            }
            let outcome = match self.attempt(input, &token) {
                Ok(out) => Outcome::Committed(out),
                Err(Failure::Rollback) => Outcome::RolledBack,
                Err(f) if f.is_conflict() && retries < CONFLICT_RETRIES_MAX => {
                    retries += 1;
                    std::thread::yield_now();
                    continue;
                }
                Err(Failure::Sql(e)) if e.kind == ErrorKind::Cancelled => {
                    let reason = token.reason().unwrap_or(CancelReason::Cancelled);
                    return Err(TpccError::Cancelled(Cancelled { reason }));
                }
                Err(f) => {
                    return Err(TpccError::Engine(format!(
                        "{} (after {retries} retries): {f}",
                        input.kind().name()
                    )));
                }
            };
            return Ok(Executed {
                outcome,
                deadlock_aborts: retries,
            });
        }
    }
}

/// Why an attempt ended without its commit.
#[derive(Debug)]
pub(super) enum Failure {
    /// New-Order's unused item (clause 2.4.2.3): roll back, done.
    Rollback,
    /// A Delivery's oldest new order was deleted by another Delivery
    /// since its statement read it: run again.
    Taken,
    /// A statement failed: a conflict (40001, 40P01, 55P03; run again) or
    /// anything else (the run stops).
    Sql(SqlError),
    /// A row the input names is missing (a broken database).
    Missing(&'static str),
    /// A result of an unexpected shape or an input the statements cannot
    /// take.
    Invalid(String),
}

impl Failure {
    pub(super) fn is_conflict(&self) -> bool {
        match self {
            Failure::Taken => true,
            Failure::Sql(e) => matches!(
                e.kind,
                ErrorKind::SerializationFailure | ErrorKind::Deadlock | ErrorKind::LockNotAvailable
            ),
            Failure::Rollback | Failure::Missing(_) | Failure::Invalid(_) => false,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Rollback => f.write_str("rolled back"),
            Failure::Taken => f.write_str("the oldest new order was delivered by another"),
            Failure::Sql(e) => write!(f, "{e}"),
            Failure::Missing(what) => write!(f, "no {what} row for the input"),
            Failure::Invalid(why) => f.write_str(why),
        }
    }
}

/// One attempt's SQL transaction: a session's slot, begun at the level the
/// run asked for.
pub(super) struct Txn<'a> {
    tpcc: &'a SqlTpcc,
    slot: TxnSlot,
    cancel: CancelToken,
}

impl Txn<'_> {
    fn run(&mut self, stmt: &Statement, params: &[ParamValue]) -> Result<Answer, Failure> {
        self.tpcc
            .engine
            .execute_parsed_in_class(stmt, params, self.cancel.clone(), None, &mut self.slot)
            .map_err(|e| Failure::Sql(within(e, &stmt.to_string())))
    }

    /// A query's rows.
    fn rows(
        &mut self,
        stmt: &Statement,
        params: &[ParamValue],
    ) -> Result<Vec<Vec<Value>>, Failure> {
        match self.run(stmt, params)? {
            Answer::Rows { rows, .. } => Ok(rows),
            _ => Err(Failure::Invalid("a query gave no rows".into())),
        }
    }

    /// The rows a write's RETURNING list gave.
    fn returned(
        &mut self,
        stmt: &Statement,
        params: &[ParamValue],
    ) -> Result<Vec<Vec<Value>>, Failure> {
        match self.run(stmt, params)? {
            Answer::Returned { returned, .. } => Ok(returned.rows),
            _ => Err(Failure::Invalid("a write returned no rows".into())),
        }
    }

    /// The rows a write inserted, updated or deleted.
    fn written(&mut self, stmt: &Statement, params: &[ParamValue]) -> Result<u64, Failure> {
        match self.run(stmt, params)? {
            Answer::Written(Written::Insert(n) | Written::Update(n) | Written::Delete(n)) => Ok(n),
            _ => Err(Failure::Invalid("a write did not say what it wrote".into())),
        }
    }

    /// Now, in microseconds since 1970 (the clock TIMESTAMP columns take).
    fn now_us(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64)
    }

    fn commit(self) -> Result<(), Failure> {
        match self.slot {
            TxnSlot::Open(txn, _) => self
                .tpcc
                .engine
                .commit(txn)
                .map_err(|e| Failure::Sql(within(crate::txn::commit_error(e), "COMMIT"))),
            // No statement ran: nothing to commit.
            TxnSlot::Begun(_) => Ok(()),
            other => Err(Failure::Invalid(format!(
                "a transaction to commit in state {other:?}"
            ))),
        }
    }

    fn abort(self) {
        if let TxnSlot::Open(txn, _) = self.slot {
            txn.abort();
        }
    }
}

/// `e` naming the statement it came from (`what`), unless it is a
/// conflict the attempt retries.
fn within(mut e: SqlError, what: &str) -> SqlError {
    if !Failure::Sql(e.clone()).is_conflict() {
        e.message = format!("{} (in {what})", e.message);
    }
    e
}

/// An integer cell.
pub(super) fn int(v: &Value) -> Result<i64, Failure> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(Failure::Invalid(format!(
            "expected an integer, got {other:?}"
        ))),
    }
}

/// An exact number cell as an integer of `scale` decimal digits (money in
/// cents at 2, rates at 4).
pub(super) fn fixed(v: &Value, scale: u8) -> Result<i64, Failure> {
    let (value, from) = match v {
        Value::Int(i) => (i128::from(*i), 0),
        Value::Decimal { value, scale } => (*value, *scale),
        other => {
            return Err(Failure::Invalid(format!(
                "expected a number, got {other:?}"
            )));
        }
    };
    let scaled = if from <= scale {
        value * 10i128.pow(u32::from(scale - from))
    } else {
        let unit = 10i128.pow(u32::from(from - scale));
        if value % unit != 0 {
            return Err(Failure::Invalid(format!(
                "{v:?} has more than {scale} decimal digits"
            )));
        }
        value / unit
    };
    i64::try_from(scaled).map_err(|_| Failure::Invalid(format!("{v:?} is out of range")))
}

/// A text cell.
pub(super) fn text(v: &Value) -> Result<&str, Failure> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(Failure::Invalid(format!("expected text, got {other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_convert_exactly_or_refuse() {
        let dec = |value, scale| Value::Decimal { value, scale };
        assert_eq!(fixed(&dec(1686, 4), 4).unwrap(), 1686);
        assert_eq!(fixed(&dec(1250, 2), 2).unwrap(), 1250);
        assert_eq!(fixed(&dec(5, 0), 2).unwrap(), 500);
        assert_eq!(fixed(&Value::Int(3), 2).unwrap(), 300);
        assert_eq!(fixed(&dec(12340, 3), 2).unwrap(), 1234);
        assert!(fixed(&dec(12345, 3), 2).is_err(), "a lost digit");
        assert!(fixed(&Value::Str("x".into()), 2).is_err());
        assert!(int(&Value::Null).is_err() && text(&Value::Int(1)).is_err());
        assert!(Failure::Taken.is_conflict() && !Failure::Rollback.is_conflict());
        let conflict = SqlError::new(ErrorKind::SerializationFailure, "x".to_string());
        assert!(Failure::Sql(conflict).is_conflict());
        let other = SqlError::new(ErrorKind::UniqueViolation, "x".to_string());
        assert!(!Failure::Sql(other).is_conflict());
    }
}
