//! The 22 CH queries as SQL text (BenchBase's texts, one file each under
//! `crates/ch/sql/`): the one copy DuckDB runs (`scripts/duckdb_answers.py`)
//! and the SQL front end's tests send through the wire protocol. `oorder` is
//! BenchBase's name of `orders` (DuckDB gets a view of that name).

/// `SQL_TEXTS[n - 1]` is query `n`'s text.
pub const SQL_TEXTS: [&str; 22] = [
    include_str!("../sql/q01.sql"),
    include_str!("../sql/q02.sql"),
    include_str!("../sql/q03.sql"),
    include_str!("../sql/q04.sql"),
    include_str!("../sql/q05.sql"),
    include_str!("../sql/q06.sql"),
    include_str!("../sql/q07.sql"),
    include_str!("../sql/q08.sql"),
    include_str!("../sql/q09.sql"),
    include_str!("../sql/q10.sql"),
    include_str!("../sql/q11.sql"),
    include_str!("../sql/q12.sql"),
    include_str!("../sql/q13.sql"),
    include_str!("../sql/q14.sql"),
    include_str!("../sql/q15.sql"),
    include_str!("../sql/q16.sql"),
    include_str!("../sql/q17.sql"),
    include_str!("../sql/q18.sql"),
    include_str!("../sql/q19.sql"),
    include_str!("../sql/q20.sql"),
    include_str!("../sql/q21.sql"),
    include_str!("../sql/q22.sql"),
];

/// Query `number`'s text with its ORDER BY made total: the select-list
/// ordinals 1..=`width` appended (as the DuckDB script does), so ties come
/// in one order and answers compare row by row.
pub fn total_order(number: u8, width: usize) -> String {
    let t = SQL_TEXTS[usize::from(number) - 1].trim_end();
    if !t.to_ascii_uppercase().contains("ORDER BY") {
        return t.to_string();
    }
    let ordinals: Vec<String> = (1..=width).map(|i| i.to_string()).collect();
    format!("{t}, {}", ordinals.join(", "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_text_is_one_select_of_its_query() {
        for (i, text) in super::SQL_TEXTS.iter().enumerate() {
            let t = text.trim_start().to_ascii_uppercase();
            assert!(
                t.starts_with("SELECT") || t.starts_with("WITH"),
                "Q{}",
                i + 1
            );
            assert!(
                !text.contains(';'),
                "Q{}: one statement, no terminator",
                i + 1
            );
        }
    }
}
