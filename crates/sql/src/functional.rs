//! Functional dependencies among GROUP BY keys: which keys the aggregation
//! need not hash because other keys already determine them.
//!
//! A scanned table is *keyed* when every column of one of its keys (a unique
//! column, or a composite key the catalog declares: CH's `(o_w_id, o_d_id,
//! o_id)`) equals some GROUP BY key that is a plain column — the key's own
//! column, or one an inner join's equality makes equal to it (CH Q3 groups
//! by `ol_o_id, ol_w_id, ol_d_id`, which its joins equate to ORDERS' key).
//! Within a group those keys are constant, so the group holds one row of the
//! keyed table, and every other key reading only that table's columns is
//! constant too: it is *dependent*, read back at each group's representative
//! row instead of hashed (TPC-H Q10 groups by `c_custkey` and six other
//! customer columns; CH Q18 by ORDERS' and CUSTOMER's keys and three columns
//! of theirs).
//!
//! Why this is sound: the keys that cover a table's key are never marked
//! dependent themselves, so every covered key is determined by hashed keys
//! alone. Only inner joins' equalities count: a left outer join's padded
//! rows break `a = b` (one side NULL), semi and anti joins output one side.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::Catalog;
use crate::plan::{ColumnId, Expr, JoinKind, Plan};

/// For each of `groups`, whether it is functionally dependent on the others
/// (see the module comment).
pub(crate) fn dependent_groups(
    input: &Plan,
    groups: &[(ColumnId, Expr)],
    catalog: &dyn Catalog,
) -> Vec<bool> {
    let mut facts = Facts::default();
    facts.collect(input, catalog);
    // The plain-column keys, by equivalence class of their column.
    let plain: Vec<(usize, ColumnId)> = groups
        .iter()
        .enumerate()
        .filter_map(|(i, (_, e))| match e {
            Expr::Column(c) => Some((i, facts.class_of(*c))),
            _ => None,
        })
        .collect();
    let covering_key = |column: ColumnId| {
        let class = facts.class_of(column);
        plain.iter().find(|(_, c)| *c == class).map(|(i, _)| *i)
    };
    let mut covered_scans = BTreeSet::new();
    let mut covering = BTreeSet::new();
    for (scan, keys) in facts.keys.iter().enumerate() {
        for key in keys {
            let cover: Option<Vec<usize>> = key.iter().map(|&c| covering_key(c)).collect();
            if let Some(cover) = cover {
                covered_scans.insert(scan);
                covering.extend(cover);
                break;
            }
        }
    }
    groups
        .iter()
        .enumerate()
        .map(|(i, (_, e))| {
            if covering.contains(&i) {
                return false;
            }
            let mut scans = e.columns().into_iter().map(|c| facts.scan_of.get(&c));
            let Some(Some(&first)) = scans.next() else {
                return false;
            };
            covered_scans.contains(&first) && scans.all(|s| s == Some(&first))
        })
        .collect()
}

/// What the input plan says about its columns.
#[derive(Default)]
struct Facts {
    /// The scan (numbered in preorder) each scanned column comes from.
    scan_of: BTreeMap<ColumnId, usize>,
    /// Per scan, its keys whose columns it reads (as output columns).
    keys: Vec<Vec<Vec<ColumnId>>>,
    /// Union-find over columns an inner join equates: column → parent.
    parent: BTreeMap<ColumnId, ColumnId>,
}

impl Facts {
    fn collect(&mut self, plan: &Plan, catalog: &dyn Catalog) {
        match plan {
            Plan::Scan { table, columns, .. } => {
                let scan = self.keys.len();
                self.scan_of.extend(columns.iter().map(|c| (c.0, scan)));
                self.keys.push(scan_keys(table, columns, catalog));
            }
            Plan::Join {
                kind: JoinKind::Inner,
                keys,
                ..
            } => {
                for (l, r) in keys {
                    if let (Expr::Column(a), Expr::Column(b)) = (l, r) {
                        self.union(*a, *b);
                    }
                }
            }
            _ => {}
        }
        for c in plan.children() {
            self.collect(c, catalog);
        }
    }

    fn class_of(&self, mut c: ColumnId) -> ColumnId {
        while let Some(&p) = self.parent.get(&c) {
            c = p;
        }
        c
    }

    fn union(&mut self, a: ColumnId, b: ColumnId) {
        let (a, b) = (self.class_of(a), self.class_of(b));
        if a != b {
            self.parent.insert(a, b);
        }
    }
}

/// The keys of `table` whose every column the scan reads, as the scan's
/// output columns: its unique columns, one each, and its composite keys.
fn scan_keys(
    table: &str,
    columns: &[(ColumnId, usize)],
    catalog: &dyn Catalog,
) -> Vec<Vec<ColumnId>> {
    let Some(def) = catalog.table(table) else {
        return Vec::new();
    };
    let output = |name: &str| {
        let position = def.columns.iter().position(|c| c.name == name)?;
        columns.iter().find(|c| c.1 == position).map(|c| c.0)
    };
    def.unique_columns
        .iter()
        .map(|c| vec![c.clone()])
        .chain(def.keys.iter().cloned())
        .filter_map(|key| key.iter().map(|c| output(c)).collect::<Option<Vec<_>>>())
        .collect()
}

#[cfg(test)]
mod tests {
    use maestro_storage::column::Table;

    use super::*;
    use crate::catalog::{ColumnDef, TableDef};
    use crate::types::SqlType;

    /// ORDERS keyed by (o_w, o_id), CUSTOMER by (c_w, c_id) and by the
    /// unique c_uid; no data (planning only).
    struct Ch;

    fn def(name: &str, columns: &[&str], unique: &[&str], keys: &[&[&str]]) -> TableDef {
        TableDef {
            name: name.into(),
            columns: columns
                .iter()
                .map(|c| ColumnDef {
                    name: c.to_string(),
                    ty: SqlType::Int,
                    nullable: false,
                })
                .collect(),
            rows: 100,
            unique_columns: unique.iter().map(|c| c.to_string()).collect(),
            keys: keys
                .iter()
                .map(|k| k.iter().map(|c| c.to_string()).collect())
                .collect(),
        }
    }

    impl Catalog for Ch {
        fn table(&self, name: &str) -> Option<TableDef> {
            match name {
                "orders" => Some(def(
                    "orders",
                    &["o_w", "o_id", "o_c", "o_date"],
                    &[],
                    &[&["o_w", "o_id"]],
                )),
                "customer" => Some(def(
                    "customer",
                    &["c_w", "c_id", "c_uid", "c_last"],
                    &["c_uid"],
                    &[&["c_w", "c_id"]],
                )),
                _ => None,
            }
        }
        fn data(&self, _: &str) -> Option<&Table> {
            None
        }
        fn table_names(&self) -> Vec<String> {
            vec!["orders".into(), "customer".into()]
        }
    }

    /// A scan of every column of `table`, output ids from `first` on.
    fn scan(table: &str, first: usize) -> Plan {
        Plan::Scan {
            table: table.into(),
            alias: table.into(),
            columns: (0..4).map(|i| (ColumnId(first + i), i)).collect(),
            filter: Vec::new(),
            rows: 100,
            index: None,
        }
    }

    // Column ids: orders 0 o_w, 1 o_id, 2 o_c, 3 o_date;
    // customer 10 c_w, 11 c_id, 12 c_uid, 13 c_last.
    fn joined(kind: JoinKind) -> Plan {
        Plan::Join {
            left: Box::new(scan("orders", 0)),
            right: Box::new(scan("customer", 10)),
            kind,
            keys: vec![
                (Expr::Column(ColumnId(0)), Expr::Column(ColumnId(10))),
                (Expr::Column(ColumnId(2)), Expr::Column(ColumnId(11))),
            ],
            residual: Vec::new(),
        }
    }

    fn dependent(input: &Plan, keys: &[usize]) -> Vec<bool> {
        let groups: Vec<(ColumnId, Expr)> = keys
            .iter()
            .enumerate()
            .map(|(i, &c)| (ColumnId(100 + i), Expr::Column(ColumnId(c))))
            .collect();
        dependent_groups(input, &groups, &Ch)
    }

    #[test]
    fn a_composite_key_makes_the_other_columns_of_its_table_dependent() {
        let orders = scan("orders", 0);
        assert_eq!(
            dependent(&orders, &[0, 1, 3, 2]),
            [false, false, true, true]
        );
        // Half a key determines nothing.
        assert_eq!(dependent(&orders, &[1, 3, 2]), [false, false, false]);
    }

    #[test]
    fn inner_join_equalities_cover_the_other_tables_key() {
        // ORDERS' key (o_w, o_id) as keys; o_w = c_w and o_c = c_id make
        // CUSTOMER's key equal to (o_w, o_c), both keys: c_last and o_date
        // are dependent, the covering keys are not.
        let plan = joined(JoinKind::Inner);
        assert_eq!(
            dependent(&plan, &[0, 1, 2, 13, 3]),
            [false, false, false, true, true]
        );
        // Without o_c among the keys CUSTOMER is not covered.
        assert_eq!(
            dependent(&plan, &[0, 1, 13, 3]),
            [false, false, false, true]
        );
    }

    #[test]
    fn outer_joins_do_not_equate_columns() {
        // CUSTOMER is not covered: c_last is hashed; o_c, now covering
        // nothing, depends on ORDERS' key like o_date.
        let plan = joined(JoinKind::LeftOuter);
        assert_eq!(
            dependent(&plan, &[0, 1, 2, 13, 3]),
            [false, false, true, false, true]
        );
    }

    #[test]
    fn a_unique_column_is_a_key_of_one_and_expressions_of_a_covered_table_are_dependent() {
        let customer = scan("customer", 10);
        let groups = vec![
            (ColumnId(100), Expr::Column(ColumnId(12))),
            (
                ColumnId(101),
                Expr::Arith(
                    crate::plan::ArithOp::Add,
                    Box::new(Expr::Column(ColumnId(10))),
                    Box::new(Expr::Column(ColumnId(11))),
                ),
            ),
            (ColumnId(102), Expr::Column(ColumnId(13))),
        ];
        assert_eq!(
            dependent_groups(&customer, &groups, &Ch),
            [false, true, true]
        );
    }
}
