//! Boundary answers: for every comparison against a substitution parameter (the
//! date ranges of Q1, Q3, Q4, Q5, Q6, Q10, Q12, Q14, Q15, Q20; Q6's discount
//! BETWEEN and quantity; Q18's `sum(l_quantity) > QUANTITY`; Q19's quantity and
//! size ranges; Q20's `ps_availqty > 0.5 * sum`) and for Q8's and Q12's CASE
//! branches, committed parameter sets (`boundary<k>` in `answers/sf0.01/`) whose
//! rows sit exactly on the bound, so that a mutated operator (`>` for `>=`, `<=`
//! for `<`, an exclusive BETWEEN end, a changed CASE branch) gives another answer.
//! `answers/generate.py` chose them from the data and checked with DuckDB that its
//! answer under each listed mutation differs from the real one (`mutations` in
//! `params.json`); here Maestro's answers must equal DuckDB's for the real query.
//! Two premises are re-checked here: Q18's QUANTITY is some order's exact total
//! quantity (independently of DuckDB, from tpchgen's rows), and Q8's set gives the
//! nation a share strictly between 0 and 1 (from DuckDB's answer).

mod common;

use std::collections::HashMap;

use maestro_tpch::queries::answers::{ANSWERS_SCALE_FACTOR, AnswerSet, answer_sets, answers_dir};

fn boundary_sets(q: u8) -> Vec<AnswerSet> {
    let sets: Vec<_> = answer_sets(&answers_dir())
        .expect("params.json reads")
        .into_iter()
        .filter(|s| s.query == q && s.set.starts_with("boundary"))
        .collect();
    assert!(!sets.is_empty(), "Q{q}: no boundary set in answers/sf0.01");
    sets
}

/// Every boundary set of `q` under two granularity policies, against DuckDB.
fn check_boundaries(q: u8) {
    let dir = answers_dir();
    let mut failures = Vec::new();
    for set in boundary_sets(q) {
        for policy in ["fixed:3", "hint"] {
            if let Err(m) = common::check_set(&set, policy, &dir) {
                failures.push(m);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

macro_rules! boundary_tests {
    ($($name:ident = $q:expr),* $(,)?) => {
        $(#[test] fn $name() { check_boundaries($q); })*
    };
}

boundary_tests!(
    q01_shipdate_bound = 1,
    q03_orderdate_and_shipdate_bounds = 3,
    q04_orderdate_range = 4,
    q05_orderdate_range = 5,
    q06_date_discount_and_quantity_bounds = 6,
    q08_case_on_the_supplier_nation = 8,
    q10_orderdate_range = 10,
    q12_receiptdate_range_and_priority_cases = 12,
    q14_shipdate_range = 14,
    q15_shipdate_range = 15,
    q18_quantity_sum_bound = 18,
    q19_quantity_and_size_ranges = 19,
    q20_shipdate_range_and_availability_bound = 20,
);

fn param<'a>(set: &'a AnswerSet, name: &str) -> &'a str {
    set.params
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("Q{} {} has no {name}", set.query, set.set))
}

/// Q18's premise, from tpchgen's lineitems: some order's total quantity is
/// exactly QUANTITY, so `>` and `>=` select different orders.
#[test]
fn q18_quantity_is_an_orders_exact_total() {
    use tpchgen::generators::LineItemGenerator;
    let mut totals: HashMap<i64, i64> = HashMap::new();
    for l in LineItemGenerator::new(ANSWERS_SCALE_FACTOR, 1, 1).iter() {
        *totals.entry(l.l_orderkey).or_default() += l.l_quantity;
    }
    for set in boundary_sets(18) {
        let quantity: i64 = param(&set, "QUANTITY").parse().unwrap();
        let on_bound = totals.values().filter(|&&t| t == quantity).count();
        assert!(
            on_bound > 0,
            "Q18 {}: no order totals exactly {quantity}",
            set.set
        );
    }
}

/// Q8's premise, from DuckDB's committed answers: in some boundary set and year
/// the nation's share is strictly between 0 and 1, so both CASE branches decide
/// rows.
#[test]
fn q08_share_is_strictly_between_zero_and_one() {
    let dir = answers_dir();
    let mut shares = Vec::new();
    for set in boundary_sets(8) {
        let text = std::fs::read_to_string(dir.join(format!("q8_{}.csv", set.set))).unwrap();
        shares.extend(
            text.lines()
                .skip(1)
                .map(|l| l.split(',').nth(1).unwrap().parse::<f64>().unwrap()),
        );
    }
    assert!(
        shares.iter().any(|&s| s > 0.0 && s < 1.0),
        "Q8 boundary sets: shares {shares:?}"
    );
}
