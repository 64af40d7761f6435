//! The 22 TPC-H queries as the spec's SQL text with the validation
//! parameters (`tests/queries/tpch_qNN.sql`, the files the answer tests
//! check against DuckDB), for commands that run them without the source
//! tree (`maestro tpch refresh --storage delta --compare-queries`).

/// The statements, Q1 first.
const STATEMENTS: [&str; 22] = [
    include_str!("../tests/queries/tpch_q01.sql"),
    include_str!("../tests/queries/tpch_q02.sql"),
    include_str!("../tests/queries/tpch_q03.sql"),
    include_str!("../tests/queries/tpch_q04.sql"),
    include_str!("../tests/queries/tpch_q05.sql"),
    include_str!("../tests/queries/tpch_q06.sql"),
    include_str!("../tests/queries/tpch_q07.sql"),
    include_str!("../tests/queries/tpch_q08.sql"),
    include_str!("../tests/queries/tpch_q09.sql"),
    include_str!("../tests/queries/tpch_q10.sql"),
    include_str!("../tests/queries/tpch_q11.sql"),
    include_str!("../tests/queries/tpch_q12.sql"),
    include_str!("../tests/queries/tpch_q13.sql"),
    include_str!("../tests/queries/tpch_q14.sql"),
    include_str!("../tests/queries/tpch_q15.sql"),
    include_str!("../tests/queries/tpch_q16.sql"),
    include_str!("../tests/queries/tpch_q17.sql"),
    include_str!("../tests/queries/tpch_q18.sql"),
    include_str!("../tests/queries/tpch_q19.sql"),
    include_str!("../tests/queries/tpch_q20.sql"),
    include_str!("../tests/queries/tpch_q21.sql"),
    include_str!("../tests/queries/tpch_q22.sql"),
];

/// The SQL text of TPC-H query `q` (1 to 22), or `None` for another number.
pub fn tpch_statement(q: u8) -> Option<&'static str> {
    STATEMENTS.get(usize::from(q).checked_sub(1)?).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_outside_1_to_22_have_no_statement() {
        assert!(tpch_statement(0).is_none() && tpch_statement(23).is_none());
        assert!(tpch_statement(1).unwrap().contains("l_returnflag"));
        assert!(tpch_statement(22).unwrap().contains("c_acctbal"));
    }
}
