//! A text that is no value of the type it is cast to, over the wire:
//! SQLSTATE 22P02 (invalid_text_representation) for numbers, 22007 for
//! dates, on constants and on stored rows, as PostgreSQL; the session goes
//! on after the error.

mod common;

use common::{first_column as values, sqlstate, with_client};

#[test]
fn a_cast_of_text_that_is_no_number_is_sqlstate_22p02() {
    with_client(async |c| {
        c.batch_execute(
            "CREATE TABLE s (id INTEGER, txt VARCHAR(10)); \
             INSERT INTO s VALUES (1, '12'), (2, 'x')",
        )
        .await
        .unwrap();
        for (sql, code) in [
            ("select cast('x' as integer)", "22P02"),
            ("select 'x'::decimal(10,2)", "22P02"),
            ("select cast('one' as double precision)", "22P02"),
            ("select cast(txt as integer) from s", "22P02"),
            ("select sum(cast(txt as decimal(10,2))) from s", "22P02"),
            ("select cast('1998-13-45' as date)", "22007"),
            ("select cast(txt as date) from s", "22007"),
        ] {
            let e = c
                .simple_query(sql)
                .await
                .err()
                .unwrap_or_else(|| panic!("{sql} should fail"));
            let (got, msg) = sqlstate(&e);
            assert_eq!(got, code, "{sql}: {msg}");
            assert!(
                msg.starts_with("invalid input syntax for type"),
                "{sql}: {msg}"
            );
        }
        // The rows whose text is a number convert.
        let rows = c
            .simple_query("select cast(txt as integer) + 1 from s where id = 1")
            .await
            .unwrap();
        assert_eq!(values(rows), ["13"]);
    });
}
