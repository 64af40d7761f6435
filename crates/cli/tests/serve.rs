//! `maestro serve` driven by real clients over TCP: tokio-postgres (simple and
//! extended protocol, binary results), psql, psycopg 3 and pgJDBC. The server
//! picks a free port itself (`--port 0`) and prints the address it listens on.
//!
//! A client that is not installed is skipped with a message, unless
//! `MAESTRO_REQUIRE_CLIENTS` is set (`.ci/run` sets it after installing them):
//! then its absence fails the test, so CI never passes by skipping.

mod common;

use std::process::{Command, Stdio};

use common::server::Server;
use common::{json_of, maestro};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{FromSql, Type};
use tokio_postgres::{Client, SimpleQueryMessage};

/// Skips a check whose client is missing, or fails it under
/// `MAESTRO_REQUIRE_CLIENTS`.
fn client_missing(what: &str) {
    assert!(
        std::env::var_os("MAESTRO_REQUIRE_CLIENTS").is_none(),
        "{what}, and MAESTRO_REQUIRE_CLIENTS is set"
    );
    eprintln!("{what}: skipping its check");
}

async fn connect(server: &Server) -> Client {
    server.connect_to("tpch").await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The rows of a simple query, as text (None: NULL).
async fn simple_rows(c: &Client, sql: &str) -> Vec<Vec<Option<String>>> {
    c.simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect()
}

/// The SQLSTATE and message of a failed statement.
fn sqlstate(e: &tokio_postgres::Error) -> (SqlState, String) {
    let db = e
        .as_db_error()
        .unwrap_or_else(|| panic!("not a server error: {e:?}"));
    (db.code().clone(), db.message().to_string())
}

/// A cell's bytes as the server sent them (binary format).
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// numeric's binary format back to text with its display scale.
fn numeric_text(b: &[u8]) -> String {
    let w = |i: usize| i16::from_be_bytes([b[2 * i], b[2 * i + 1]]);
    let (n, weight, sign, dscale) = (w(0) as usize, i32::from(w(1)), w(2), w(3) as usize);
    let digit = |idx: i32| {
        usize::try_from(idx)
            .ok()
            .filter(|&i| i < n)
            .map_or(0, |i| w(4 + i))
    };
    let mut int = String::new();
    for k in 0..=weight {
        let d = digit(k);
        if int.is_empty() {
            int = d.to_string();
        } else {
            int += &format!("{d:04}");
        }
    }
    if int.is_empty() {
        int.push('0');
    }
    let mut frac = String::new();
    let mut e = 1;
    while frac.len() < dscale {
        frac += &format!("{:04}", digit(weight + e));
        e += 1;
    }
    frac.truncate(dscale);
    let sign = if sign == 0x4000 { "-" } else { "" };
    if dscale == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

const Q1: &str = "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, \
    sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, avg(l_discount) as avg_disc, \
    count(*) as count_order, min(l_shipdate) as first_ship \
    from lineitem where l_shipdate <= date '1998-12-01' - interval '90' day \
    group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus";

#[test]
fn serve_answers_as_maestro_sql_does() {
    let server = Server::start(&["--sf", "0.01"]);
    let expected = json_of(&maestro(&["sql", "--sf", "0.01", "--json", Q1]));
    let rt = runtime();
    rt.block_on(async {
        let mut c = connect(&server).await;

        // Simple protocol: the rows as text equal `maestro sql`'s.
        let rows = simple_rows(&c, Q1).await;
        let want = expected["rows"].as_array().unwrap();
        assert_eq!(rows.len(), want.len());
        assert_eq!(rows.len(), 4);
        for (got, want) in rows.iter().zip(want) {
            for (g, w) in got.iter().zip(want.as_array().unwrap()) {
                let g = g.as_deref().expect("no NULLs in Q1");
                match w {
                    serde_json::Value::String(s) => assert_eq!(g, s),
                    serde_json::Value::Number(n) if n.is_i64() => {
                        assert_eq!(g.parse::<i64>().unwrap(), n.as_i64().unwrap())
                    }
                    serde_json::Value::Number(n) => {
                        assert_eq!(g.parse::<f64>().unwrap(), n.as_f64().unwrap())
                    }
                    other => panic!("unexpected {other}"),
                }
            }
        }

        // Extended protocol: the described column types, then the rows in
        // binary (tokio-postgres asks for binary results).
        let stmt = c.prepare(Q1).await.unwrap();
        let names: Vec<&str> = stmt.columns().iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            expected["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect::<Vec<_>>()
        );
        let types: Vec<&Type> = stmt.columns().iter().map(|c| c.type_()).collect();
        assert_eq!(
            types,
            [
                &Type::VARCHAR,
                &Type::VARCHAR,
                &Type::NUMERIC,
                &Type::NUMERIC,
                &Type::FLOAT8,
                &Type::INT8,
                &Type::DATE
            ]
        );
        let binary = c.query(&stmt, &[]).await.unwrap();
        assert_eq!(binary.len(), rows.len());
        for (b, t) in binary.iter().zip(&rows) {
            let t: Vec<&str> = t.iter().map(|v| v.as_deref().unwrap()).collect();
            assert_eq!(b.get::<_, String>(0), t[0]);
            assert_eq!(b.get::<_, String>(1), t[1]);
            assert_eq!(numeric_text(&b.get::<_, Raw>(2).0), t[2]);
            assert_eq!(numeric_text(&b.get::<_, Raw>(3).0), t[3]);
            assert_eq!(b.get::<_, f64>(4), t[4].parse::<f64>().unwrap());
            assert_eq!(b.get::<_, i64>(5), t[5].parse::<i64>().unwrap());
            let days = i32::from_be_bytes(b.get::<_, Raw>(6).0.try_into().unwrap());
            assert_eq!(
                maestro_storage::column::Date(days + 10_957).to_string(),
                t[6]
            );
        }

        // A statement without a prepare step (unnamed statement) in the
        // extended protocol, and EXPLAIN.
        let n = c
            .query_one("select count(*) as n from nation", &[])
            .await
            .unwrap();
        assert_eq!(n.get::<_, i64>(0), 25);
        let plan = simple_rows(&c, "explain select count(*) from nation").await;
        assert!(!plan.is_empty());

        // Errors carry their SQLSTATE; the session goes on after each.
        let cases = [
            ("selec 1", SqlState::SYNTAX_ERROR),
            ("select * from nosuch", SqlState::UNDEFINED_TABLE),
            ("select nosuch from nation", SqlState::UNDEFINED_COLUMN),
            (
                "select n_name from nation union select r_name from region",
                SqlState::FEATURE_NOT_SUPPORTED,
            ),
            ("select date '1998-13-01' from nation", SqlState::INVALID_DATETIME_FORMAT),
        ];
        for (sql, code) in &cases {
            let e = c.simple_query(sql).await.expect_err(sql);
            assert_eq!(&sqlstate(&e).0, code, "{sql}: {e:?}");
            let e = c.prepare(sql).await.expect_err(sql);
            assert_eq!(&sqlstate(&e).0, code, "prepared {sql}: {e:?}");
            assert_eq!(simple_rows(&c, "select count(*) from region").await[0][0].as_deref(), Some("5"));
        }
        // The error's position points at the offending name.
        let e = c.simple_query("select * from nosuch").await.unwrap_err();
        assert!(matches!(
            e.as_db_error().unwrap().position(),
            Some(tokio_postgres::error::ErrorPosition::Original(15))
        ));
        // Parameters: typed by their context, bound by the client.
        let row = c
            .query_one("select n_name from nation where n_nationkey = $1", &[&7i64])
            .await
            .unwrap();
        assert_eq!(row.get::<_, String>(0), "GERMANY");
        // Several statements in one simple query: the ones before an error
        // run, the ones after do not.
        let e = c
            .simple_query("select count(*) from region; select * from nosuch; select 1 from region")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, SqlState::UNDEFINED_TABLE);

        // What drivers send around their queries.
        c.batch_execute("SET DateStyle = 'ISO, MDY'; SET extra_float_digits = 3")
            .await
            .unwrap();
        assert_eq!(
            simple_rows(&c, "SHOW extra_float_digits").await,
            [[Some("3".to_string())]]
        );
        assert_eq!(
            simple_rows(&c, "SHOW transaction_isolation").await,
            [[Some("repeatable read".to_string())]]
        );
        let v = c.query_one("select version()", &[]).await.unwrap();
        assert!(v.get::<_, String>(0).starts_with("PostgreSQL 16"));
        c.batch_execute("BEGIN; select count(*) from nation; COMMIT")
            .await
            .unwrap();

        // A portal fetched in pieces (Execute with a row limit, then
        // PortalSuspended), inside BEGIN … COMMIT.
        let tx = c.transaction().await.unwrap();
        let portal = tx
            .bind("select n_name from nation order by n_name", &[])
            .await
            .unwrap();
        let first = tx.query_portal(&portal, 10).await.unwrap();
        let rest = tx.query_portal(&portal, 100).await.unwrap();
        assert_eq!((first.len(), rest.len()), (10, 15));
        assert_eq!(first[0].get::<_, String>(0), "ALGERIA");
        assert_eq!(rest[14].get::<_, String>(0), "VIETNAM");
        tx.commit().await.unwrap();

        // Two connections at once: a second session sees its own settings
        // and both run statements concurrently.
        let c2 = connect(&server).await;
        assert_eq!(
            simple_rows(&c2, "SHOW extra_float_digits").await,
            [[Some("1".to_string())]]
        );
        let q = "select o_orderstatus, count(*) from orders group by o_orderstatus order by o_orderstatus";
        let (a, b) = (
            tokio::spawn(async move { simple_rows(&c, q).await }),
            tokio::spawn(async move { simple_rows(&c2, q).await }),
        );
        let (a, b) = (a.await.unwrap(), b.await.unwrap());
        assert_eq!(a, b);
        assert_eq!(a.len(), 3);
    });

    // psql, the shell client.
    if std::path::Path::new("/usr/bin/psql").exists() {
        let out = Command::new("/usr/bin/psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &server.port.to_string(),
                "-U",
                "maestro",
                "-X",
                "-A",
                "-t",
                "-c",
                "select count(*) from nation",
            ])
            .env("PGCONNECT_TIMEOUT", "60")
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "25");
    } else {
        client_missing("psql not installed");
    }
}

#[test]
fn serve_refuses_bad_flags() {
    for args in [
        ["serve", "--sf", "0"],
        ["serve", "--host", "no such host name"],
    ] {
        let out = maestro(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            common::stderr(&out)
        );
    }
}

/// `--max-connections N`: the (N+1)-th session is refused with 53300, and
/// its place comes back when a session ends; a bound outside 1..=100 000
/// is a usage error.
#[test]
fn serve_bounds_its_sessions() {
    let out = maestro(&["serve", "--port", "0", "--max-connections", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("--max-connections"),
        "{}",
        common::stderr(&out)
    );
    let server = Server::start(&["--max-connections", "1"]);
    let url = format!("host=127.0.0.1 port={} user=maestro", server.port);
    runtime().block_on(async {
        let first = connect(&server).await;
        let refused = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .err()
            .expect("a second session is refused");
        assert_eq!(sqlstate(&refused).0, SqlState::TOO_MANY_CONNECTIONS);
        assert_eq!(
            simple_rows(&first, "select 1").await,
            [[Some("1".to_string())]]
        );
        drop(first);
        // The session's thread ends after the client goes: wait for the
        // place (bounded by WAIT; each attempt is refused or admitted).
        let deadline = std::time::Instant::now() + common::server::WAIT;
        let second = loop {
            match tokio_postgres::connect(&url, tokio_postgres::NoTls).await {
                Ok((client, connection)) => {
                    tokio::spawn(connection);
                    break client;
                }
                Err(e) => {
                    assert_eq!(sqlstate(&e).0, SqlState::TOO_MANY_CONNECTIONS);
                    assert!(
                        std::time::Instant::now() < deadline,
                        "the place never came back"
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            }
        };
        assert_eq!(
            simple_rows(&second, "select 2").await,
            [[Some("2".to_string())]]
        );
    });
}

#[test]
fn serve_starts_empty_and_call_loads_tpch() {
    let server = Server::start(&[]);
    runtime().block_on(async {
        let c = connect(&server).await;
        let e = c
            .simple_query("select count(*) from nation")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, SqlState::UNDEFINED_TABLE);
        let e = c
            .simple_query("CALL maestro.load_tpch(-1)")
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e).0, SqlState::INVALID_PARAMETER_VALUE);
        let e = c.simple_query("CALL maestro.nothing(1)").await.unwrap_err();
        assert_eq!(sqlstate(&e).0, SqlState::UNDEFINED_FUNCTION);
        c.batch_execute("CALL maestro.load_tpch(0.01)")
            .await
            .unwrap();
        assert_eq!(
            simple_rows(&c, "select count(*) from nation").await,
            [[Some("25".to_string())]]
        );
        // Bad input on other connections: garbage instead of a startup
        // message, a startup then a malformed message, a client that sends a
        // query and vanishes. The server stays up for everyone else.
        use std::io::Write as _;
        let addr = format!("127.0.0.1:{}", server.port);
        let mut garbage = std::net::TcpStream::connect(&addr).unwrap();
        let _ = garbage.write_all(&[0xff; 64]);
        drop(garbage);
        let mut bad = std::net::TcpStream::connect(&addr).unwrap();
        let mut startup = Vec::new();
        let body: &[u8] = b"\0\x03\0\0user\0maestro\0\0";
        startup.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        startup.extend_from_slice(body);
        let _ = bad.write_all(&startup);
        // A 'Q' message whose length says 1 GiB, then a few bytes.
        let _ = bad.write_all(b"Q\x40\0\0\0select");
        drop(bad);
        let vanish = connect(&server).await;
        let pending = tokio::spawn(async move {
            let _ = vanish.simple_query("select count(*) from lineitem").await;
        });
        pending.abort();
        let _ = pending.await;

        // Another session sees the loaded tables.
        let c2 = connect(&server).await;
        let n = c2
            .query_one("select count(*) from region", &[])
            .await
            .unwrap();
        assert_eq!(n.get::<_, i64>(0), 5);
    });
}

/// psycopg 3 from a Python script, when Python has it (`pip install
/// "psycopg[binary]"`); skipped otherwise.
#[test]
fn serve_psycopg() {
    let has_psycopg = Command::new("python3")
        .args(["-c", "import psycopg"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_psycopg {
        client_missing("python3 with psycopg not found");
        return;
    }
    let server = Server::start(&["--sf", "0.01"]);
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/serve_psycopg.py"
        ))
        .arg(server.port.to_string())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// pgJDBC (the PostgreSQL JDBC driver) from a single-file Java program:
/// prepared INSERTs and SELECTs across the driver's switch to named server
/// statements, DECIMAL and DATE parameters, a transaction rolled back and one
/// committed, SQLSTATEs, `CALL maestro.load_tpch`. The driver's jar comes from
/// `MAESTRO_JDBC_JAR` (`.ci/run` downloads it from Maven Central).
#[test]
fn serve_jdbc() {
    let jar = std::env::var_os("MAESTRO_JDBC_JAR").map(std::path::PathBuf::from);
    let has_java = Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let Some(jar) = jar.filter(|j| j.exists() && has_java) else {
        client_missing("java or the pgJDBC jar (MAESTRO_JDBC_JAR) not found");
        return;
    };
    let server = Server::start(&[]);
    let out = Command::new("java")
        .arg("-cp")
        .arg(&jar)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/serve_jdbc/JdbcSmoke.java"
        ))
        .arg(server.port.to_string())
        .output()
        .expect("java runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "jdbc: ok");
}

/// psql runs a script: CREATE TABLE, `\copy` of a CSV (COPY FROM STDIN on
/// the wire), a query, a transaction rolled back and one committed. The
/// README's psql session, checked.
#[test]
fn serve_psql_script_creates_copies_and_queries() {
    if !std::path::Path::new("/usr/bin/psql").exists() {
        client_missing("psql not installed");
        return;
    }
    let server = Server::start(&[]);
    let dir = std::env::temp_dir().join(format!("maestro-psql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("fruit.csv");
    std::fs::write(
        &csv,
        "id,name,price\n1,apple,0.50\n2,\"pear, green\",0.75\n3,fig,2\n",
    )
    .unwrap();
    let script = dir.join("script.sql");
    std::fs::write(
        &script,
        format!(
            "CREATE TABLE fruit (id INTEGER, name VARCHAR(20), price DECIMAL(6,2));\n\
             \\copy fruit FROM '{}' WITH (FORMAT csv, HEADER)\n\
             SELECT name, price FROM fruit WHERE price < 1 ORDER BY id;\n\
             BEGIN;\n\
             DELETE FROM fruit;\n\
             SELECT count(*) FROM fruit;\n\
             ROLLBACK;\n\
             BEGIN;\n\
             UPDATE fruit SET price = price * 2 WHERE name = 'fig';\n\
             INSERT INTO fruit VALUES (4, 'kiwi', 1.25);\n\
             COMMIT;\n\
             SELECT count(*), sum(price) FROM fruit;\n",
            csv.display()
        ),
    )
    .unwrap();
    let out = Command::new("/usr/bin/psql")
        .args(["-h", "127.0.0.1", "-p", &server.port.to_string()])
        .args(["-U", "maestro", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
        .arg("-f")
        .arg(&script)
        .env("PGCONNECT_TIMEOUT", "60")
        .output()
        .expect("psql runs");
    std::fs::remove_dir_all(&dir).ok();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines,
        [
            "CREATE TABLE",
            "COPY 3",
            "apple|0.50",
            "pear, green|0.75",
            "BEGIN",
            "DELETE 3",
            "0",
            "ROLLBACK",
            "BEGIN",
            "UPDATE 1",
            "INSERT 0 1",
            "COMMIT",
            "4|6.50",
        ]
    );
}
