//! Prepared statements with `$n` parameters over the extended protocol,
//! through tokio-postgres: Describe's parameter types, values in binary
//! (what tokio-postgres sends) and text format, answers equal to the same
//! statement with the values written in, one statement run with different
//! values, and the errors of values that are not of their type.

mod common;

use std::error::Error;

use common::{Server, sqlstate, with_client};
use tokio_postgres::Client;
use tokio_postgres::types::{Format, IsNull, ToSql, Type, to_sql_checked};

type BoxError = Box<dyn Error + Sync + Send>;

/// A decimal as numeric's binary format: base-10000 digits around the
/// point, its weight, sign and display scale.
#[derive(Debug)]
struct Numeric(&'static str);

impl ToSql for Numeric {
    fn to_sql(&self, _: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        let (neg, s) = match self.0.strip_prefix('-') {
            Some(s) => (true, s),
            None => (false, self.0),
        };
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let int = format!("{}{int}", "0".repeat((4 - int.len() % 4) % 4));
        let frac_padded = format!("{frac}{}", "0".repeat((4 - frac.len() % 4) % 4));
        let group = |t: &str| -> Vec<i16> {
            t.as_bytes()
                .chunks(4)
                .map(|c| std::str::from_utf8(c).unwrap().parse().unwrap())
                .collect()
        };
        let mut digits = group(&int);
        let mut weight = digits.len() as i16 - 1;
        digits.extend(group(&frac_padded));
        while digits.first() == Some(&0) {
            digits.remove(0);
            weight -= 1;
        }
        while digits.last() == Some(&0) {
            digits.pop();
        }
        let head = [
            digits.len() as i16,
            weight,
            if neg { 0x4000 } else { 0 },
            frac.len() as i16,
        ];
        for w in head.iter().chain(&digits) {
            out.extend_from_slice(&w.to_be_bytes());
        }
        Ok(IsNull::No)
    }

    fn accepts(t: &Type) -> bool {
        *t == Type::NUMERIC
    }

    to_sql_checked!();
}

/// A date as days since 2000-01-01 (date's binary format).
#[derive(Debug)]
struct PgDate(i32);

impl ToSql for PgDate {
    fn to_sql(&self, _: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        out.extend_from_slice(&self.0.to_be_bytes());
        Ok(IsNull::No)
    }

    fn accepts(t: &Type) -> bool {
        *t == Type::DATE
    }

    to_sql_checked!();
}

/// A value sent in text format, whatever the parameter's type.
#[derive(Debug)]
struct Text(&'static str);

impl ToSql for Text {
    fn to_sql(&self, _: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _: &Type) -> Format {
        Format::Text
    }

    to_sql_checked!();
}

async fn count(c: &Client, sql: &str, params: &[&(dyn ToSql + Sync)]) -> i64 {
    c.query_one(sql, params)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
        .get(0)
}

/// The text answer of a simple query (the values written in).
async fn inlined(c: &Client, sql: &str) -> i64 {
    let rows = c
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    rows.iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(|v| v.parse().unwrap()),
            _ => None,
        })
        .expect("one row")
}

#[test]
fn parameters_bind_like_inlined_literals() {
    with_client(async |c| {
        c.simple_query("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();

        // Describe infers each parameter's type from its context.
        let stmt = c
            .prepare(
                "select l_orderkey, l_quantity from lineitem where l_quantity < $1 \
                 and l_shipdate > $2 and l_returnflag = $3 and l_orderkey in ($4, 7) \
                 order by 1 limit $5",
            )
            .await
            .unwrap();
        assert_eq!(
            stmt.params(),
            [
                Type::NUMERIC,
                Type::DATE,
                Type::TEXT,
                Type::INT8,
                Type::INT8
            ]
        );
        assert_eq!(stmt.columns()[1].type_(), &Type::NUMERIC);

        // One prepared statement, run with different values, answers as the
        // statement with the values inlined.
        let q = c
            .prepare("select count(*) from lineitem where l_quantity < $1")
            .await
            .unwrap();
        for v in ["10", "24.5", "-1", "50.25"] {
            let value: &'static str = v;
            let got: i64 = c.query_one(&q, &[&Numeric(value)]).await.unwrap().get(0);
            let want = inlined(
                c,
                &format!("select count(*) from lineitem where l_quantity < {v}"),
            )
            .await;
            assert_eq!(got, want, "l_quantity < {v}");
        }
        let few: i64 = c.query_one(&q, &[&Numeric("3")]).await.unwrap().get(0);
        let many: i64 = c.query_one(&q, &[&Numeric("40")]).await.unwrap().get(0);
        assert!(0 < few && few < many, "{few} {many}");

        // Text format for the same statement.
        let t: i64 = c.query_one(&q, &[&Text("24.5")]).await.unwrap().get(0);
        assert_eq!(
            t,
            inlined(c, "select count(*) from lineitem where l_quantity < 24.5").await
        );

        // Integers, strings, dates, IN lists, BETWEEN, OR with a boolean,
        // a double, LIMIT.
        let cases: Vec<(&str, Vec<&(dyn ToSql + Sync)>, &str)> = vec![
            (
                "select count(*) from orders where o_custkey = $1",
                vec![&370i64],
                "select count(*) from orders where o_custkey = 370",
            ),
            (
                "select count(*) from customer where c_mktsegment = $1",
                vec![&"BUILDING"],
                "select count(*) from customer where c_mktsegment = 'BUILDING'",
            ),
            (
                "select count(*) from orders where o_orderdate between $1 and $2",
                // 1995-01-01 and 1995-03-31: 1826 and 1915 days after 2000-01-01, negated.
                vec![&PgDate(-1826), &PgDate(-1737)],
                "select count(*) from orders where o_orderdate between date '1995-01-01' and date '1995-03-31'",
            ),
            (
                "select count(*) from nation where n_regionkey in ($1, $2)",
                vec![&1i64, &3i64],
                "select count(*) from nation where n_regionkey in (1, 3)",
            ),
            (
                "select count(*) from nation where n_nationkey < 3 or $1",
                vec![&true],
                "select count(*) from nation",
            ),
            (
                "select count(*) from nation where cast(n_nationkey as double) < $1",
                vec![&7.5f64],
                "select count(*) from nation where n_nationkey < 7.5",
            ),
            (
                "select count(*) from (select n_name from nation order by n_name limit $1 offset $2) t",
                vec![&4i64, &20i64],
                "select 4",
            ),
            (
                "select count(*) from nation where n_name like $1",
                vec![&"%A%"],
                "select count(*) from nation where n_name like '%A%'",
            ),
        ];
        for (sql, params, inline) in cases {
            let got = count(c, sql, &params).await;
            assert_eq!(got, inlined(c, inline).await, "{sql}");
        }

        // A date the binary way equals the same text.
        let d = count(
            c,
            "select count(*) from orders where o_orderdate < $1",
            &[&Text("1995-01-01")],
        )
        .await;
        let b = count(
            c,
            "select count(*) from orders where o_orderdate < $1",
            &[&PgDate(-1826)],
        )
        .await;
        assert_eq!(d, b);

        // SQL NULL: a comparison with it holds for no row.
        let none: Option<&str> = None;
        assert_eq!(
            count(c, "select count(*) from nation where n_name = $1", &[&none]).await,
            0
        );
    });
}

#[test]
fn bad_parameter_values_are_errors() {
    with_client(async |c| {
        c.simple_query("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        let q = "select count(*) from lineitem where l_quantity < $1";
        for bad in ["abc", "1.2.3", ""] {
            let e = c.query_one(q, &[&Text(bad)]).await.unwrap_err();
            let (code, msg) = sqlstate(&e);
            assert_eq!(code, "22P02", "{bad}: {msg}");
            assert!(
                msg.contains("invalid input syntax for type numeric"),
                "{msg}"
            );
        }
        let e = c
            .query_one(
                "select count(*) from nation where n_nationkey = $1",
                &[&Text("x1")],
            )
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "22P02");
        let e = c
            .query_one(
                "select count(*) from orders where o_orderdate < $1",
                &[&Text("1995-13-45")],
            )
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "22007");
        // A parameter the simple protocol cannot have.
        let e = c
            .simple_query("select count(*) from nation where n_nationkey = $1")
            .await
            .unwrap_err();
        let (code, msg) = sqlstate(&e);
        assert_eq!(code, "42P02", "{msg}");
        assert!(msg.contains("there is no parameter $1"), "{msg}");
        // A declared type the server does not have.
        let e = c
            .prepare_typed(
                "select count(*) from nation where n_nationkey = $1",
                &[Type::UUID],
            )
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "0A000");
        // Declared INT4 (tokio-postgres' i32) instead of the inferred INT8.
        let s = c
            .prepare_typed(
                "select count(*) from nation where n_nationkey < $1",
                &[Type::INT4],
            )
            .await
            .unwrap();
        assert_eq!(s.params(), [Type::INT4]);
        let n: i64 = c.query_one(&s, &[&10i32]).await.unwrap().get(0);
        assert_eq!(n, 10);
        // The session goes on.
        assert_eq!(count(c, "select count(*) from region", &[]).await, 5);
    });
}

/// Frontend messages written by hand: tokio-postgres checks the parameter
/// count itself, so a Bind with the wrong count needs a raw connection.
mod raw {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn cstr(s: &str) -> Vec<u8> {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        v
    }

    /// Reads backend messages until ReadyForQuery; returns the SQLSTATE of
    /// the first ErrorResponse, if any.
    fn until_ready(s: &mut TcpStream) -> Option<String> {
        let mut code = None;
        loop {
            let mut head = [0u8; 5];
            s.read_exact(&mut head).expect("a message");
            let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize - 4;
            let mut body = vec![0u8; len];
            s.read_exact(&mut body).expect("its body");
            match head[0] {
                b'E' if code.is_none() => {
                    // Fields: a type byte and a C string each.
                    let mut i = 0;
                    while i < body.len() && body[i] != 0 {
                        let end = i + 1 + body[i + 1..].iter().position(|&b| b == 0).unwrap();
                        if body[i] == b'C' {
                            code = Some(String::from_utf8_lossy(&body[i + 1..end]).into_owned());
                        }
                        i = end + 1;
                    }
                }
                b'Z' => return code,
                _ => {}
            }
        }
    }

    /// Parse + Bind with `values` (text) + Execute + Sync: the error's
    /// SQLSTATE, or None if it ran.
    pub fn bind_count(port: u16, sql: &str, values: &[&str]) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connects");
        let mut startup = 196_608i32.to_be_bytes().to_vec();
        startup.extend(cstr("user"));
        startup.extend(cstr("maestro"));
        startup.push(0);
        let mut m = (startup.len() as i32 + 4).to_be_bytes().to_vec();
        m.extend(startup);
        s.write_all(&m).unwrap();
        assert_eq!(until_ready(&mut s), None);
        let mut parse = cstr("");
        parse.extend(cstr(sql));
        parse.extend(0i16.to_be_bytes());
        let mut bind = cstr("");
        bind.extend(cstr(""));
        bind.extend(0i16.to_be_bytes());
        bind.extend((values.len() as i16).to_be_bytes());
        for v in values {
            bind.extend((v.len() as i32).to_be_bytes());
            bind.extend(v.as_bytes());
        }
        bind.extend(0i16.to_be_bytes());
        let mut execute = cstr("");
        execute.extend(0i32.to_be_bytes());
        let mut out = message(b'P', &parse);
        out.extend(message(b'B', &bind));
        out.extend(message(b'E', &execute));
        out.extend(message(b'S', &[]));
        s.write_all(&out).unwrap();
        until_ready(&mut s)
    }
}

#[test]
fn a_bind_with_the_wrong_parameter_count_is_a_protocol_violation() {
    let server = Server::start();
    let sql = "select $1::int + $2::int";
    assert_eq!(raw::bind_count(server.port, sql, &["1", "2"]), None);
    assert_eq!(
        raw::bind_count(server.port, sql, &["1"]).as_deref(),
        Some("08P01")
    );
    assert_eq!(
        raw::bind_count(server.port, sql, &["1", "2", "3"]).as_deref(),
        Some("08P01")
    );
    assert_eq!(
        raw::bind_count(server.port, sql, &["1", "x"]).as_deref(),
        Some("22P02")
    );
}

/// A timestamp parameter sent untyped with a zone offset, as pgJDBC's
/// `setTimestamp` sends it: inferred from the column, the zone ignored (a
/// timestamp without time zone), stored as a timestamp and found again.
#[test]
fn an_untyped_timestamp_parameter_with_a_zone_is_stored_as_a_timestamp() {
    with_client(async |c| {
        c.batch_execute("create table ev (id integer, ts timestamp)")
            .await
            .unwrap();
        let described = c.prepare("insert into ev values ($1, $2)").await.unwrap();
        assert_eq!(described.params(), &[Type::INT8, Type::TIMESTAMP]);
        let st = c
            .prepare_typed(
                "insert into ev values ($1, $2)",
                &[Type::INT4, Type::UNKNOWN],
            )
            .await
            .unwrap();
        for (id, text) in [
            (1i32, "2026-11-01 10:00:00.5+01"),
            (2, "2026-11-01 10:00:00.5"),
        ] {
            let n = c.execute(&st, &[&id, &text]).await.unwrap();
            assert_eq!(n, 1, "{text}");
        }
        // Declared TEXT: described as TEXT (a stand-in timestamp, not an
        // empty string, binds it), its text parsed when it runs.
        let text_param = c
            .prepare_typed("insert into ev values ($1, $2)", &[Type::INT4, Type::TEXT])
            .await
            .unwrap();
        assert_eq!(text_param.params(), &[Type::INT4, Type::TEXT]);
        let n = c
            .execute(&text_param, &[&3i32, &"2026-11-01 10:00:00.5"])
            .await
            .unwrap();
        assert_eq!(n, 1);
        let e = c
            .execute(&text_param, &[&4i32, &"not a timestamp"])
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, "22007", "{e:?}");
        let rows = c
            .simple_query(
                "select count(*) from ev where ts = cast('2026-11-01 10:00:00.5' as timestamp)",
            )
            .await
            .unwrap();
        let counted = rows.iter().find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        });
        assert_eq!(counted.as_deref(), Some("3"));
    });
}
