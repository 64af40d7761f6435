//! `EXPLAIN`: a [`LogicalPlan`] as an indented tree, one operator per line,
//! expressions as SQL-like text with `alias.column` names, and the
//! optimizer's estimate of the rows it outputs (`est=…`, from column
//! statistics). `EXPLAIN ANALYZE` adds to each line what the node did in a
//! run ([`Analysis`]): its actual output rows (to set against the
//! estimate), its time (inclusive of its inputs, as PostgreSQL's), and the
//! operator tasks it created and the memory it charged (its own, without
//! its inputs').

use std::fmt::{self, Write as _};

use crate::lower::{Analysis, NodeStats};
use crate::plan::{ArithOp, Direction, Expr, JoinKind, LogicalPlan, Plan};

impl LogicalPlan {
    /// The plan as an indented tree, one operator per line.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        self.explain_node(&self.root, 0, None, &mut 0, &mut out);
        out
    }

    /// The plan with what each node did in the run `analysis` measured
    /// (a run of this very plan: nodes are known by their address).
    pub fn explain_analyzed(&self, analysis: &Analysis) -> String {
        let mut out = String::new();
        self.explain_node(&self.root, 0, Some(analysis), &mut 0, &mut out);
        out
    }

    /// `node`'s line suffix: `(actual rows=… time=… ms tasks=… memory=…)`.
    fn annotation(node: &Plan, analysis: &Analysis) -> String {
        let Some(NodeStats {
            rows,
            elapsed,
            tasks,
            memory_bytes,
        }) = analysis.get(node)
        else {
            return " (never executed)".to_string();
        };
        // Tasks and memory without the inputs' (theirs are on their lines).
        let (mut own_tasks, mut own_bytes) = (tasks, memory_bytes);
        for c in node.children() {
            // A shared plan runs before the statement's tree, on its own:
            // its consumer's time and tasks do not include it.
            if matches!(c, Plan::Shared { .. }) {
                continue;
            }
            if let Some(s) = analysis.get(c) {
                own_tasks = own_tasks.saturating_sub(s.tasks);
                own_bytes = own_bytes.saturating_sub(s.memory_bytes);
            }
        }
        format!(
            " (actual rows={rows} time={:.3} ms tasks={own_tasks} memory={:.1} KiB)",
            elapsed.as_secs_f64() * 1e3,
            own_bytes as f64 / 1024.0
        )
    }

    fn explain_node(
        &self,
        plan: &Plan,
        depth: usize,
        analysis: Option<&Analysis>,
        preorder: &mut usize,
        out: &mut String,
    ) {
        let estimate = self.estimates.get(*preorder).copied();
        *preorder += 1;
        let pad = "  ".repeat(depth);
        let e = |x: &Expr| self.show(x);
        let list = |xs: &[Expr]| xs.iter().map(e).collect::<Vec<_>>().join(" AND ");
        let _ = match plan {
            Plan::Scan {
                table,
                alias,
                columns,
                filter,
                rows,
                index,
            } => {
                let cols: Vec<&str> = columns
                    .iter()
                    .map(|c| short(&self.column(c.0).name))
                    .collect();
                let name = if alias == table {
                    table.clone()
                } else {
                    format!("{table} AS {alias}")
                };
                let f = if filter.is_empty() {
                    String::new()
                } else {
                    format!(" filter [{}]", list(filter))
                };
                // An index scan names its index and the conjuncts the
                // lookup answers (the filter still checks them).
                let kind = match index {
                    Some(ix) => format!(
                        "Index Scan {name} using {} ({})",
                        ix.name,
                        list(&ix.answers)
                    ),
                    None => format!("Scan {name}"),
                };
                writeln!(out, "{pad}{kind} [{}]{f} ({rows} rows)", cols.join(", "))
            }
            Plan::Filter { predicate, .. } => writeln!(out, "{pad}Filter {}", list(predicate)),
            Plan::OneRow => writeln!(out, "{pad}OneRow"),
            Plan::Series {
                column,
                start,
                step,
                rows,
            } => writeln!(
                out,
                "{pad}Series [{}] (start {start}, step {step}) ({rows} rows)",
                self.column(*column).name
            ),
            Plan::Shared { id, .. } => writeln!(out, "{pad}Shared #{id}"),
            Plan::SharedRef { id, columns } => {
                let c: Vec<&str> = columns
                    .iter()
                    .map(|c| short(&self.column(c.0).name))
                    .collect();
                writeln!(out, "{pad}-> #{id} [{}]", c.join(", "))
            }
            Plan::Join {
                keys,
                kind,
                residual,
                ..
            } => {
                let mut k: Vec<String> = keys
                    .iter()
                    .map(|(l, r)| format!("{} = {}", e(l), e(r)))
                    .collect();
                k.extend(residual.iter().map(e));
                let name = match kind {
                    JoinKind::Inner => "HashJoin",
                    JoinKind::LeftOuter => "HashLeftJoin",
                    JoinKind::Semi => "HashSemiJoin",
                    JoinKind::Anti | JoinKind::AntiIn => "HashAntiJoin",
                };
                if keys.is_empty() && *kind == JoinKind::Inner {
                    writeln!(out, "{pad}CrossJoin")
                } else if crate::lower::stacked(plan).is_some() {
                    // `lower/stacked.rs`: one scan and reduction of the
                    // subqueries' table serves this join and the one below.
                    writeln!(
                        out,
                        "{pad}{name} {} [table read once with the join below]",
                        k.join(" AND ")
                    )
                } else {
                    writeln!(out, "{pad}{name} {}", k.join(" AND "))
                }
            }
            Plan::Map { exprs, .. } => {
                let m: Vec<String> = exprs
                    .iter()
                    .map(|(id, x)| format!("{} AS {}", e(x), self.column(*id).name))
                    .collect();
                writeln!(out, "{pad}Map {}", m.join(", "))
            }
            Plan::Aggregate { groups, aggs, .. } => {
                let g: Vec<String> = groups.iter().map(|(_, x)| e(x)).collect();
                let a: Vec<String> = aggs
                    .iter()
                    .map(|(id, _)| self.column(*id).name.clone())
                    .collect();
                writeln!(
                    out,
                    "{pad}Aggregate group by [{}] compute [{}]",
                    g.join(", "),
                    a.join(", ")
                )
            }
            Plan::Sort { keys, .. } => {
                let k: Vec<String> = keys
                    .iter()
                    .map(|(x, d, nulls_first)| {
                        // PostgreSQL's default: NULLs sort as if larger.
                        let nulls = match (d, nulls_first) {
                            (Direction::Asc, true) => " NULLS FIRST",
                            (Direction::Desc, false) => " NULLS LAST",
                            _ => "",
                        };
                        match d {
                            Direction::Asc => format!("{}{nulls}", e(x)),
                            Direction::Desc => format!("{} DESC{nulls}", e(x)),
                        }
                    })
                    .collect();
                writeln!(out, "{pad}Sort {}", k.join(", "))
            }
            Plan::Limit { count, offset, .. } => match (*count, *offset) {
                (c, 0) => writeln!(out, "{pad}Limit {c}"),
                (usize::MAX, o) => writeln!(out, "{pad}Offset {o}"),
                (c, o) => writeln!(out, "{pad}Limit {c} Offset {o}"),
            },
            Plan::Project { outputs, .. } => {
                let o: Vec<String> = outputs
                    .iter()
                    .map(|(n, x)| {
                        let s = e(x);
                        if short(&s) == n {
                            s
                        } else {
                            format!("{s} AS {n}")
                        }
                    })
                    .collect();
                writeln!(out, "{pad}Project {}", o.join(", "))
            }
        };
        if let Some(rows) = estimate
            && out.ends_with('\n')
        {
            out.pop();
            let _ = writeln!(out, " (est={rows})");
        }
        if let Some(a) = analysis
            && out.ends_with('\n')
        {
            out.pop();
            out.push_str(&Self::annotation(plan, a));
            out.push('\n');
        }
        for child in plan.children() {
            self.explain_node(child, depth + 1, analysis, preorder, out);
        }
    }

    /// An expression as SQL-like text with column names.
    pub fn show(&self, e: &Expr) -> String {
        Shown {
            plan: self,
            expr: e,
        }
        .to_string()
    }
}

/// The column part of `alias.column`.
fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

struct Shown<'p> {
    plan: &'p LogicalPlan,
    expr: &'p Expr,
}

impl<'p> fmt::Display for Shown<'p> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plan = self.plan;
        let s = move |e: &'p Expr| Shown { plan, expr: e };
        let join = |es: &'p [Expr], sep: &str| {
            es.iter()
                .map(|e| s(e).to_string())
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self.expr {
            Expr::Column(c) => f.write_str(&self.plan.column(*c).name),
            Expr::Lit(l) => write!(f, "{l}"),
            Expr::Arith(op, a, b) => {
                let o = match op {
                    ArithOp::Add => "+",
                    ArithOp::Sub => "-",
                    ArithOp::Mul => "*",
                    ArithOp::Div => "/",
                    ArithOp::Mod => "%",
                };
                write!(f, "({} {o} {})", s(a), s(b))
            }
            Expr::Cmp(op, a, b) => write!(f, "{} {} {}", s(a), op.symbol(), s(b)),
            Expr::And(es) => write!(f, "({})", join(es, " AND ")),
            Expr::Or(es) => write!(f, "({})", join(es, " OR ")),
            Expr::Not(e) => write!(f, "NOT {}", s(e)),
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let l: Vec<String> = list.iter().map(|l| l.to_string()).collect();
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{} {not}IN ({})", s(expr), l.join(", "))
            }
            Expr::Like {
                expr,
                pattern,
                negated,
            } => {
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{} {not}LIKE '{pattern}'", s(expr))
            }
            e @ Expr::Case { .. } if e.is_null_literal() => f.write_str("NULL"),
            Expr::Case { whens, otherwise } => {
                f.write_str("CASE")?;
                for (c, v) in whens {
                    write!(f, " WHEN {} THEN {}", s(c), s(v))?;
                }
                match otherwise {
                    Some(o) => write!(f, " ELSE {} END", s(o)),
                    None => f.write_str(" END"),
                }
            }
            Expr::Year(e) => write!(f, "EXTRACT(YEAR FROM {})", s(e)),
            Expr::Ascii(e) => write!(f, "ascii({})", s(e)),
            Expr::Substring { expr, start, len } => match len {
                Some(n) => write!(f, "SUBSTRING({} FROM {start} FOR {n})", s(expr)),
                None => write!(f, "SUBSTRING({} FROM {start})", s(expr)),
            },
            Expr::IsNull { expr, negated } => {
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{} IS {not}NULL", s(expr))
            }
            Expr::Cast(e, t) => write!(f, "CAST({} AS {t})", s(e)),
            Expr::Concat(a, b) => write!(f, "({} || {})", s(a), s(b)),
            Expr::Text(t, e) => write!(f, "{}({})", t.name(), s(e)),
        }
    }
}
