//! EXPLAIN and the optimizer's rewrites: filters pushed into scans, join
//! keys taken from WHERE equalities, joins ordered by size from the smallest
//! table, scans pruned to the columns read.

mod common;

use common::{explain, query};

#[test]
fn tpch_q5_reduces_the_orders_by_the_regions_customers_before_lineitem() {
    let plan = explain(&format!(
        "explain {}",
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/queries/tpch_q05.sql"
        ))
        .unwrap()
    ));
    let lines: Vec<&str> = plan.lines().collect();
    let scans: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.trim().strip_prefix("Scan "))
        .map(|s| s.split(' ').next().unwrap())
        .collect();
    // Left-deep: the first scan printed is the innermost table. The
    // equality c_nationkey = n_nationkey, implied by c_nationkey =
    // s_nationkey and s_nationkey = n_nationkey, links customer to the
    // ASIA region's nations: the region's customers reduce the year's
    // orders before lineitem is probed (as the hand-written plan does),
    // and the suppliers, joined on (suppkey, nationkey), come last — not
    // first, where every lineitem of an Asian supplier would be joined.
    assert!(
        plan.contains("HashJoin customer.c_nationkey = nation.n_nationkey")
            || plan.contains("HashJoin nation.n_nationkey = customer.c_nationkey"),
        "{plan}"
    );
    assert_eq!(scans.last(), Some(&"supplier"), "{plan}");
    assert!(
        scans.iter().position(|s| *s == "orders") < scans.iter().position(|s| *s == "lineitem"),
        "{plan}"
    );
    assert_eq!(scans.len(), 6, "{plan}");
    assert!(
        plan.contains("Scan region [r_regionkey, r_name] filter [region.r_name = 'ASIA']"),
        "{plan}"
    );
    assert!(
        plan.contains("filter [orders.o_orderdate >= DATE '1994-01-01' AND orders.o_orderdate < DATE '1995-01-01']"),
        "the interval is folded and both bounds pushed down: {plan}"
    );
    assert!(
        plan.contains("Scan lineitem [l_orderkey, l_suppkey, l_extendedprice, l_discount]"),
        "only the columns read: {plan}"
    );
    // The cycle customer–supplier–lineitem: the last join has several keys.
    assert!(
        plan.lines()
            .any(|l| l.trim().starts_with("HashJoin") && l.matches(" = ").count() >= 2),
        "{plan}"
    );
    assert!(!plan.contains("Filter"), "every conjunct placed: {plan}");
    assert!(lines[0].starts_with("Project nation.n_name, "), "{plan}");
}

#[test]
fn residual_conditions_sit_right_above_the_join_that_enables_them() {
    let plan = explain(
        "explain select count(*) as n from orders, customer \
         where o_custkey = c_custkey and o_totalprice > c_acctbal * 10",
    );
    let filter = plan
        .lines()
        .position(|l| l.trim_start().starts_with("Filter"))
        .expect(&plan);
    let join = plan
        .lines()
        .position(|l| l.trim_start().starts_with("HashJoin"))
        .expect(&plan);
    assert_eq!(filter + 1, join, "{plan}");
    assert!(
        plan.contains("Aggregate group by [] compute [count(*)]"),
        "{plan}"
    );
}

#[test]
fn explain_shows_sort_limit_and_aggregates() {
    let plan = explain(
        "EXPLAIN SELECT l_returnflag, sum(l_quantity) AS q FROM lineitem \
         GROUP BY l_returnflag ORDER BY q DESC LIMIT 2",
    );
    let want = [
        // The estimates: l_returnflag's three dictionary values.
        "Project lineitem.l_returnflag, sum(l_quantity) AS q (est=2)",
        "  Limit 2 (est=2)",
        "    Sort sum(l_quantity) DESC (est=3)",
        "      Aggregate group by [lineitem.l_returnflag] compute [sum(l_quantity)] (est=3)",
        "        Scan lineitem [l_quantity, l_returnflag] (60175 rows) (est=60175)",
    ];
    assert_eq!(plan.lines().collect::<Vec<_>>(), want, "{plan}");
}

fn explain_file(name: &str) -> String {
    explain(&format!(
        "explain {}",
        std::fs::read_to_string(format!(
            "{}/tests/queries/{name}.sql",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    ))
}

#[test]
fn exists_and_not_exists_are_semi_and_anti_joins_with_residuals() {
    let plan = explain_file("tpch_q21");
    assert!(
        plan.contains(
            "HashAntiJoin l1.l_orderkey = l3.l_orderkey AND l3.l_suppkey <> l1.l_suppkey"
        ),
        "{plan}"
    );
    assert!(
        plan.contains(
            "HashSemiJoin l1.l_orderkey = l2.l_orderkey AND l2.l_suppkey <> l1.l_suppkey"
        ),
        "{plan}"
    );
    // The subquery's own condition is pushed into its scan.
    assert!(
        plan.contains("Scan lineitem AS l3 [l_orderkey, l_suppkey, l_commitdate, l_receiptdate] filter [l3.l_receiptdate > l3.l_commitdate]"),
        "{plan}"
    );
    // Stacked on the semi join, on the same key column of lineitem: one
    // scan of lineitem, reduced once to the candidates' orders, serves both
    // (`lower/stacked.rs`), as the hand-written Q21 does.
    assert!(
        plan.lines()
            .any(|l| l.trim_start().starts_with("HashAntiJoin")
                && l.contains("[table read once with the join below]")),
        "{plan}"
    );
}

#[test]
fn stacked_subqueries_on_one_table_read_it_once_only_on_the_same_keys() {
    let stacked = explain(
        "explain select o_orderkey from orders where o_totalprice > 400000 \
         and exists (select * from lineitem where l_orderkey = o_orderkey and l_quantity > 45) \
         and not exists (select * from lineitem l where l.l_orderkey = o_orderkey \
                         and l.l_discount > 0.09)",
    );
    assert!(
        stacked.contains("[table read once with the join below]"),
        "{stacked}"
    );
    // Another outer expression, another table, or another column of the
    // table: two joins, each reading its own table.
    for other in ["l.l_orderkey = o_orderkey + 0", "l.l_partkey = o_orderkey"] {
        let plan = explain(&format!(
            "explain select o_orderkey from orders where o_totalprice > 400000 \
             and exists (select * from lineitem where l_orderkey = o_orderkey and l_quantity > 45) \
             and not exists (select * from lineitem l where {other} and l.l_discount > 0.09)"
        ));
        assert!(!plan.contains("read once"), "{plan}");
    }
    let plan = explain(
        "explain select o_orderkey from orders where o_totalprice > 400000 \
         and exists (select * from lineitem where l_orderkey = o_orderkey) \
         and not exists (select * from partsupp where ps_partkey = o_orderkey)",
    );
    assert!(!plan.contains("read once"), "{plan}");
}

#[test]
fn stacked_subqueries_read_once_give_the_answers_of_two_reads() {
    // Both orders of EXISTS and NOT EXISTS, each with its own filter and a
    // `<>` residual; the outer side small (the table is reduced to its
    // keys first) or over a quarter of the table (not reduced). `+ 0` on
    // the outer key makes the same query two separate joins.
    let outers = [
        (
            "orders",
            "o_orderkey",
            "o_custkey % 7 + 1",
            "o_totalprice > 300000",
        ),
        (
            "lineitem x",
            "x.l_orderkey",
            "x.l_linenumber",
            "x.l_quantity > 2",
        ),
    ];
    for (table, key, other, filter) in outers {
        for (first, second) in [("exists", "not exists"), ("not exists", "exists")] {
            let sql = |k: &str| {
                format!(
                    "select {key}, {other} from {table} where {filter} \
                     and {first} (select * from lineitem a where a.l_orderkey = {key} \
                                  and a.l_linenumber <> {other} and a.l_quantity > 45) \
                     and {second} (select * from lineitem b where b.l_orderkey = {k} \
                                   and b.l_linenumber <> {other} and b.l_discount > 0.08)"
                )
            };
            let plan = explain(&format!("explain {}", sql(key)));
            assert!(plan.contains("read once"), "{plan}");
            let rows = |sql: String| {
                let mut r: Vec<String> = query(&sql)
                    .unwrap()
                    .rows
                    .iter()
                    .map(|r| format!("{r:?}"))
                    .collect();
                r.sort();
                r
            };
            let once = rows(sql(key));
            assert!(!once.is_empty(), "{table} {first}");
            assert_eq!(once, rows(sql(&format!("{key} + 0"))), "{table} {first}");
        }
    }
}

#[test]
fn correlated_scalar_subqueries_become_grouped_joins() {
    let plan = explain_file("tpch_q17");
    // avg(l_quantity) per part, joined to part on the correlation key.
    assert!(
        plan.contains("Aggregate group by [lineitem.l_partkey] compute [avg(l_quantity)]"),
        "{plan}"
    );
    assert!(
        plan.contains("Filter lineitem.l_quantity < (0.2 * avg(l_quantity))"),
        "{plan}"
    );
    // Only the lines of the parts the outer query keeps are averaged: the
    // aggregate's input is semi-joined with the filtered part scan. The
    // outer query's lineitem, joined to those parts on the same key, is
    // given the same semi join (twins.rs), and share.rs computes the
    // reduced lineitem once for both: one lineitem scan, as by hand.
    assert_eq!(plan.matches("Scan lineitem ").count(), 1, "{plan}");
    let shared = plan
        .lines()
        .position(|l| l.trim_start().starts_with("Shared #1"))
        .expect(&plan);
    let below: Vec<&str> = plan.lines().skip(shared + 1).take(3).collect();
    assert!(
        below[0].contains("HashSemiJoin lineitem.l_partkey = part.p_partkey"),
        "{plan}"
    );
    assert!(below[1].contains("Scan lineitem "), "{plan}");
    assert!(
        below[2].contains("Scan part [p_partkey, p_brand, p_container] filter"),
        "{plan}"
    );
    assert!(
        plan.lines()
            .any(|l| l.trim_start().starts_with("-> #1 [l_partkey, l_quantity")),
        "the aggregate reads the shared rows: {plan}"
    );
    // Q2: the minimum cost per part is a join key with the part key.
    let plan = explain_file("tpch_q02");
    assert!(
        plan.contains("partsupp.ps_supplycost = min(ps_supplycost)")
            || plan.contains("min(ps_supplycost) = partsupp.ps_supplycost"),
        "{plan}"
    );
    // The aggregate's input (partsupp with the region's suppliers) is
    // reduced to the selected parts at partsupp itself, before its joins:
    // the semi join's left side is the partsupp scan.
    let lines: Vec<&str> = plan.lines().collect();
    let semi = lines
        .iter()
        .position(|l| l.contains("HashSemiJoin partsupp.ps_partkey = part.p_partkey"))
        .expect(&plan);
    assert!(
        lines[semi + 1].trim_start().starts_with("Scan partsupp "),
        "{plan}"
    );
    // The outer query's partsupp is the same reduced scan, computed once.
    assert_eq!(plan.matches("Scan partsupp ").count(), 1, "{plan}");
}

#[test]
fn uncorrelated_scalar_subqueries_are_one_row_cross_products() {
    let plan = explain_file("tpch_q22");
    assert!(plan.contains("CrossJoin"), "{plan}");
    assert!(
        plan.contains("HashAntiJoin customer.c_custkey = orders.o_custkey"),
        "{plan}"
    );
    assert!(
        plan.contains("Map SUBSTRING(customer.c_phone FROM 1 FOR 2) AS custsale.cntrycode"),
        "{plan}"
    );
    // The average's customers are the outer query's (the costly SUBSTRING
    // filter) with a positive balance: that filter runs once
    // (share_scans.rs), the subquery filters its result further.
    assert_eq!(plan.matches("Scan customer ").count(), 1, "{plan}");
    let lines: Vec<&str> = plan.lines().collect();
    let extra = lines
        .iter()
        .position(|l| {
            l.trim_start()
                .starts_with("Filter customer.c_acctbal > 0.00")
        })
        .expect(&plan);
    assert!(lines[extra + 1].trim_start().starts_with("-> #"), "{plan}");
}

#[test]
fn left_joins_filter_their_right_side_first() {
    let plan = explain_file("tpch_q13");
    assert!(
        plan.contains("HashLeftJoin customer.c_custkey = orders.o_custkey"),
        "{plan}"
    );
    assert!(
        plan.contains("filter [orders.o_comment NOT LIKE '%special%requests%']"),
        "{plan}"
    );
}

#[test]
fn a_count_over_a_left_join_on_the_left_key_groups_the_right_side_first() {
    let plan = explain_file("tpch_q13");
    let lines: Vec<&str> = plan.lines().map(str::trim).collect();
    let join = lines
        .iter()
        .position(|l| l.starts_with("HashLeftJoin"))
        .expect(&plan);
    // customer, then orders counted per o_custkey: the join sees one row
    // per ordering customer, not every order.
    assert!(lines[join + 1].starts_with("Scan customer"), "{plan}");
    assert!(
        lines[join + 2]
            .starts_with("Aggregate group by [orders.o_custkey] compute [count(o_orderkey)]"),
        "{plan}"
    );
    assert!(lines[join - 1].starts_with("Map "), "{plan}");
    // COUNT(*) counts an unmatched customer's padded row: not rewritten.
    let plan = explain(
        "explain select c_custkey, count(*) as n from customer left join orders \
         on c_custkey = o_custkey group by c_custkey",
    );
    assert!(!plan.contains("Map"), "{plan}");
}

#[test]
fn grouping_before_a_left_join_keeps_the_answers() {
    // The same aggregates, with a group key the rule does not take
    // (`c_custkey + 0` is no column): no match gives 0 and NULLs.
    let grouped = |key: &str| {
        common::query(&format!(
            "select {key} as k, count(o_orderkey) as n, \
             sum(o_totalprice) as s, min(o_orderdate) as lo, max(o_orderkey) as hi \
             from customer left join orders on c_custkey = o_custkey \
             and o_orderpriority = '1-URGENT' group by {key} order by k"
        ))
        .unwrap()
    };
    let fast = grouped("c_custkey");
    let slow = grouped("c_custkey + 0");
    assert_eq!(fast.rows, slow.rows);
    assert!(
        fast.rows
            .iter()
            .any(|r| r[1] == maestro_tpch::queries::Value::Int(0)),
        "some customer without an urgent order"
    );
}

#[test]
fn or_of_ands_gives_up_its_common_join_key_and_implied_filters() {
    let plan = explain_file("tpch_q19");
    assert!(
        plan.contains("HashJoin part.p_partkey = lineitem.l_partkey")
            || plan.contains("HashJoin lineitem.l_partkey = part.p_partkey"),
        "{plan}"
    );
    // Each table gets the disjunction of its own parts of the disjuncts.
    assert!(
        plan.contains("Scan part [p_partkey, p_brand, p_size, p_container] filter [((part.p_brand = 'Brand#12'"),
        "{plan}"
    );
}

#[test]
fn a_selective_semi_join_moves_onto_its_table_and_reduces_the_aggregate() {
    let plan = explain_file("tpch_q20");
    let lines: Vec<&str> = plan.lines().map(str::trim).collect();
    // partsupp is semi-joined with the `forest%` parts before its join…
    let semi = lines
        .iter()
        .position(|l| l.starts_with("HashSemiJoin partsupp.ps_partkey = part.p_partkey"))
        .expect(&plan);
    assert!(lines[semi + 1].starts_with("Scan partsupp"), "{plan}");
    // …and the per-(part, supplier) sums only for those pairs.
    assert!(
        plan.contains(
            "HashSemiJoin lineitem.l_partkey = partsupp.ps_partkey AND lineitem.l_suppkey = partsupp.ps_suppkey"
        ),
        "{plan}"
    );
}

#[test]
fn in_subquery_with_having_filters_orders_before_the_joins() {
    let plan = explain_file("tpch_q18");
    let lines: Vec<&str> = plan.lines().map(str::trim).collect();
    let semi = lines
        .iter()
        .position(|l| l.starts_with("HashSemiJoin orders.o_orderkey = lineitem.l_orderkey"))
        .expect(&plan);
    assert!(lines[semi + 1].starts_with("Scan orders"), "{plan}");
}

#[test]
fn a_filter_over_a_derived_table_goes_below_its_computed_columns() {
    // `n_regionkey <> 0` runs before the division, so no row divides by zero.
    let plan = explain(
        "explain select q from (select n_nationkey / n_regionkey as q, n_regionkey from nation) s \
         where n_regionkey <> 0 and q > 20",
    );
    let lines: Vec<&str> = plan.lines().map(str::trim).collect();
    assert!(
        lines[1].starts_with("Filter ") && lines[1].contains("> 20"),
        "{plan}"
    );
    assert!(lines[2].starts_with("Map "), "{plan}");
    assert!(
        lines[3].starts_with("Scan nation")
            && lines[3].contains("filter [nation.n_regionkey <> 0]"),
        "{plan}"
    );
}

/// The number of lines of `plan` whose operator starts with `prefix`.
fn lines_starting(plan: &str, prefix: &str) -> usize {
    plan.lines()
        .filter(|l| l.trim_start().starts_with(prefix))
        .count()
}

#[test]
fn q15s_view_referenced_twice_is_computed_once() {
    let plan = explain_file("tpch_q15");
    // One aggregation over lineitem, shared by the join with supplier
    // and the scalar subquery's max.
    assert_eq!(lines_starting(&plan, "Scan lineitem"), 1, "{plan}");
    assert_eq!(lines_starting(&plan, "Shared #1"), 1, "{plan}");
    assert_eq!(lines_starting(&plan, "-> #1"), 1, "{plan}");
    let shared = plan.lines().position(|l| l.contains("Shared #1")).unwrap();
    assert!(
        plan.lines()
            .nth(shared + 1)
            .unwrap()
            .contains("Aggregate group by [lineitem.l_suppkey]"),
        "{plan}"
    );
}

#[test]
fn q11s_join_repeated_in_its_having_subquery_is_computed_once() {
    let plan = explain_file("tpch_q11");
    for table in ["partsupp", "supplier", "nation"] {
        assert_eq!(lines_starting(&plan, &format!("Scan {table}")), 1, "{plan}");
    }
    assert_eq!(lines_starting(&plan, "Shared #1"), 1, "{plan}");
    assert_eq!(lines_starting(&plan, "-> #1"), 1, "{plan}");
    // The two aggregates (per part, and the total) both remain.
    assert_eq!(lines_starting(&plan, "Aggregate"), 2, "{plan}");
}

#[test]
fn a_with_query_whose_references_differ_after_pushdown_is_not_shared() {
    // The filter on `a.c` reaches the scan of one reference only: the two
    // are different plans, each keeps its own filter.
    let plan = explain(
        "explain with t as (select n_nationkey as k, n_regionkey as r, n_name as c from nation) \
         select count(*) as n from t a, t b, region \
         where a.k = b.k and a.r = r_regionkey and b.r = r_regionkey and a.c = 'FRANCE'",
    );
    assert!(!plan.contains("Shared"), "{plan}");
    assert!(plan.contains("'FRANCE'"), "{plan}");
}

#[test]
fn join_keys_implied_by_the_others_are_not_hashed() {
    // Q9's WHERE equates ps_suppkey with l_suppkey and s_suppkey, and
    // ps_partkey with l_partkey and p_partkey; lineitem already joined
    // supplier and part on those columns, so partsupp's join hashes two
    // keys (the closure of the equalities gave it four).
    let plan = explain_file("tpch_q09");
    let join = plan
        .lines()
        .find(|l| l.contains("HashJoin") && l.contains("partsupp.ps_"))
        .unwrap_or_else(|| panic!("no join with partsupp: {plan}"));
    assert_eq!(join.matches(" = ").count(), 2, "{join}");
    assert!(
        join.contains("ps_suppkey") && join.contains("ps_partkey"),
        "{join}"
    );
}
