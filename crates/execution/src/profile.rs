//! What a query run did, per operator: time, rows, tasks. Operators report into
//! their [`crate::ExecContext`]; [`crate::ExecContext::finish`] returns a
//! [`QueryProfile`] (and feeds the adaptive policy).

use std::fmt::Write;
use std::time::Duration;

use serde::Serialize;

/// A stable label of one operator within a plan (`"scan_lineitem"`), the key of
/// the adaptive policy's per-operator degree of parallelism.
pub type OpId = &'static str;

/// The kind of operator a profile entry belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum OpKind {
    Select,
    Project,
    Aggregate,
    JoinBuild,
    JoinProbe,
    Sort,
}

/// The accumulated work of one operator (all its calls and phases) in a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpProfile {
    pub op: OpId,
    pub kind: OpKind,
    /// Times the operator ran in this query.
    pub calls: u32,
    pub rows_in: u64,
    pub rows_out: u64,
    /// Tasks created (all phases; for `hint`, initial pieces plus splits).
    pub tasks: u64,
    /// Of `tasks`, pieces split off because the hint rose.
    pub splits: u64,
    /// The largest task count the policy asked for (before capping by rows).
    pub dop: usize,
    /// The most tasks one phase actually used.
    pub max_phase_tasks: usize,
    /// Wall time inside the operator.
    pub elapsed: Duration,
}

impl OpProfile {
    /// Whether a higher degree of parallelism could change anything: some phase
    /// used every task the policy asked for (it was not capped by its row count).
    pub fn can_grow(&self) -> bool {
        self.max_phase_tasks >= self.dop
    }
}

/// One query run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueryProfile {
    /// The query template (`"Q1"`).
    pub template: String,
    /// The granularity policy, as parsed (`"hint"`, `"fixed:4"`).
    pub granularity: String,
    /// Wall time from the context's creation to `finish`.
    pub elapsed: Duration,
    /// Tasks created by all operators.
    pub tasks: u64,
    /// Bytes the operators charged to the statement (`ExecContext::charge`).
    pub memory_charged: u64,
    /// One entry per operator, in the order they first ran.
    pub ops: Vec<OpProfile>,
}

impl QueryProfile {
    /// The operator that took the most time.
    pub fn most_expensive(&self) -> Option<&OpProfile> {
        self.ops.iter().max_by_key(|o| o.elapsed)
    }

    pub fn op(&self, op: OpId) -> Option<&OpProfile> {
        self.ops.iter().find(|o| o.op == op)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a profile serializes")
    }

    /// A small text table, one line per operator.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} [{}]: {:.2} ms, {} tasks, {:.1} MiB charged\n",
            self.template,
            self.granularity,
            ms(self.elapsed),
            self.tasks,
            self.memory_charged as f64 / 1048576.0
        );
        for o in &self.ops {
            let _ = writeln!(
                s,
                "  {:<24} {:>9.2} ms  rows {:>9} -> {:<9} tasks {:>4} (splits {}, dop {})",
                o.op,
                ms(o.elapsed),
                o.rows_in,
                o.rows_out,
                o.tasks,
                o.splits,
                o.dop
            );
        }
        s
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The profile under construction (one per context, behind a mutex).
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    ops: Vec<OpProfile>,
}

/// One finished call of an operator.
pub(crate) struct OpCall {
    pub op: OpId,
    pub kind: OpKind,
    pub rows_in: usize,
    pub rows_out: usize,
    pub tasks: usize,
    pub splits: usize,
    pub dop: usize,
    pub max_phase_tasks: usize,
    pub elapsed: Duration,
}

impl Recorder {
    pub(crate) fn add(&mut self, c: OpCall) {
        let idx = match self.ops.iter().position(|o| o.op == c.op) {
            Some(i) => i,
            None => {
                self.ops.push(OpProfile {
                    op: c.op,
                    kind: c.kind,
                    calls: 0,
                    rows_in: 0,
                    rows_out: 0,
                    tasks: 0,
                    splits: 0,
                    dop: 0,
                    max_phase_tasks: 0,
                    elapsed: Duration::ZERO,
                });
                self.ops.len() - 1
            }
        };
        let o = &mut self.ops[idx];
        o.calls += 1;
        o.rows_in += c.rows_in as u64;
        o.rows_out += c.rows_out as u64;
        o.tasks += c.tasks as u64;
        o.splits += c.splits as u64;
        o.dop = o.dop.max(c.dop);
        o.max_phase_tasks = o.max_phase_tasks.max(c.max_phase_tasks);
        o.elapsed += c.elapsed;
    }

    /// Tasks created by the operators recorded so far.
    pub(crate) fn tasks(&self) -> u64 {
        self.ops.iter().map(|o| o.tasks).sum()
    }

    pub(crate) fn take(&mut self) -> Vec<OpProfile> {
        std::mem::take(&mut self.ops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(op: OpId, tasks: usize, ms: u64) -> OpCall {
        OpCall {
            op,
            kind: OpKind::Select,
            rows_in: 10,
            rows_out: 5,
            tasks,
            splits: 0,
            dop: tasks,
            max_phase_tasks: tasks,
            elapsed: Duration::from_millis(ms),
        }
    }

    #[test]
    fn calls_of_one_operator_accumulate() {
        let mut r = Recorder::default();
        r.add(call("a", 2, 5));
        r.add(call("b", 1, 1));
        r.add(call("a", 3, 7));
        let p = QueryProfile {
            memory_charged: 0,
            template: "t".into(),
            granularity: "static".into(),
            elapsed: Duration::from_millis(13),
            tasks: 6,
            ops: r.take(),
        };
        assert_eq!(p.ops.len(), 2);
        let a = p.op("a").unwrap();
        assert_eq!((a.calls, a.tasks, a.rows_in, a.dop), (2, 5, 20, 3));
        assert_eq!(a.elapsed, Duration::from_millis(12));
        assert_eq!(p.most_expensive().unwrap().op, "a");
        assert!(p.summary().contains("tasks    5"), "{}", p.summary());
        assert!(p.to_json().contains("\"op\":\"a\""));
    }
}
