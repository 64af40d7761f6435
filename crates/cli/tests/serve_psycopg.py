"""maestro serve through psycopg 3 (run by tests/serve.rs when psycopg is installed).

Usage: python3 serve_psycopg.py PORT. Exits non-zero on the first failed check.
"""

import datetime
import decimal
import sys

import psycopg

port = int(sys.argv[1])
q = (
    "select l_returnflag, sum(l_quantity) as qty, avg(l_discount) as disc, "
    "min(l_shipdate) as first_ship, count(*) as n from lineitem "
    "group by l_returnflag order by l_returnflag"
)
with psycopg.connect(host="127.0.0.1", port=port, user="maestro", dbname="tpch") as conn:
    with conn.cursor() as cur:
        # Not autocommit: psycopg sends BEGIN first; the server accepts it.
        cur.execute(q)
        assert [c.type_code for c in cur.description] == [1043, 1700, 701, 1082, 20], cur.description
        text_rows = cur.fetchall()
        assert [r[0] for r in text_rows] == ["A", "N", "R"], text_rows
        flag, qty, disc, first, n = text_rows[0]
        assert isinstance(qty, decimal.Decimal) and qty == qty.quantize(decimal.Decimal("0.01"))
        assert isinstance(disc, float) and isinstance(first, datetime.date) and isinstance(n, int)
        # The same in binary, and prepared server-side.
        cur.execute(q, binary=True)
        assert cur.fetchall() == text_rows
        for _ in range(2):
            cur.execute("select count(*) from nation", prepare=True)
            assert cur.fetchone() == (25,)
        # An error: its SQLSTATE; after ROLLBACK the session goes on.
        try:
            cur.execute("select * from nosuch")
            raise AssertionError("no error")
        except psycopg.errors.UndefinedTable as e:
            assert e.sqlstate == "42P01", e
        conn.rollback()
        cur.execute("select count(*) from region")
        assert cur.fetchone() == (5,)
    conn.commit()
    conn.autocommit = True
    # Snapshot isolation: PostgreSQL calls it repeatable read.
    assert conn.execute("show transaction_isolation").fetchone() == ("repeatable read",)
    # A parameter, bound server-side (psycopg 3 sends $1 with the extended protocol).
    row = conn.execute("select n_name from nation where n_nationkey = %s", (1,)).fetchone()
    assert row == ("ARGENTINA",), row
    try:
        conn.execute("select 1 / 0")
        raise AssertionError("no error")
    except psycopg.errors.DivisionByZero as e:
        assert e.sqlstate == "22012", e
    # What an ORM does with a table of its own: generated keys back from
    # INSERT ... RETURNING, defaults filled in.
    conn.execute(
        "create table note (id serial primary key, body text not null, "
        "stars integer default 3, created timestamp default now())"
    )
    ids = [
        conn.execute("insert into note (body) values (%s) returning id", (b,)).fetchone()[0]
        for b in ("first", "second")
    ]
    assert ids == [1, 2], ids
    row = conn.execute("select body, stars, created from note where id = %s", (2,)).fetchone()
    assert row[:2] == ("second", 3) and isinstance(row[2], datetime.datetime), row
    row = conn.execute(
        "update note set stars = stars + 1 where id = %s returning id, stars", (1,)
    ).fetchone()
    assert row == (1, 4), row
    cur = conn.execute("delete from note where id = %s returning body", (2,))
    assert cur.fetchall() == [("second",)] and cur.rowcount == 1, cur.rowcount
    # Python's bool and float in and out of BOOLEAN, DOUBLE PRECISION and
    # REAL columns, with the filters an application writes.
    conn.execute(
        "create table reading (id serial primary key, valid boolean not null, "
        "value double precision, ratio real)"
    )
    with conn.cursor() as cur:
        cur.executemany(
            "insert into reading (valid, value, ratio) values (%s, %s, %s)",
            [(True, 21.5, 0.1), (False, -1e-300, None), (True, float("inf"), 2.5)],
        )
    rows = conn.execute(
        "select valid, value, ratio from reading where valid order by id"
    ).fetchall()
    assert rows == [(True, 21.5, 0.1), (True, float("inf"), 2.5)], rows
    row = conn.execute(
        "select count(*), sum(value) from reading where value < %s", (0.0,)
    ).fetchone()
    assert row == (1, -1e-300), row
    assert conn.execute("select max(ratio) from reading").fetchone() == (2.5,)
    # An upsert as SQLAlchemy's on_conflict_do_update writes it.
    conn.execute("create table tally (name text primary key, n integer not null)")
    for _ in range(3):
        conn.execute(
            "insert into tally (name, n) values (%s, %s) "
            "on conflict (name) do update set n = tally.n + excluded.n",
            ("a", 2),
        )
    assert conn.execute("select name, n from tally").fetchall() == [("a", 6)]
    # A migration as Alembic writes one, then rows from generate_series.
    conn.execute("alter table tally add column seen timestamp")
    conn.execute("alter table tally add column weight double precision not null default 1")
    conn.execute("alter table tally rename column n to hits")
    conn.execute(
        "insert into tally (name, hits) select 'g' || cast(g as text), g "
        "from generate_series(1, %s) as g",
        (4,),
    )
    row = conn.execute(
        "select count(*), sum(hits), count(distinct seen), sum(weight) from tally"
    ).fetchone()
    assert row == (5, 16, 0, 5.0), row
    # Filters on doubles and booleans, with the awkward values.
    rows = conn.execute(
        "select id from reading where value > %s or ratio = %s order by id", (0, 2.5)
    ).fetchall()
    assert rows == [(1,), (3,)], rows
    conn.execute("CALL maestro.load_tpch(0.01)")
    assert conn.execute("select count(*) from nation").fetchone() == (25,)
# READ COMMITTED as psycopg asks for it (BEGIN ISOLATION LEVEL READ COMMITTED),
# and a work queue: two connections each take another row with FOR UPDATE
# SKIP LOCKED while both blocks are open.
with psycopg.connect(host="127.0.0.1", port=port, user="maestro", dbname="tpch") as setup:
    setup.autocommit = True
    setup.execute("create table job (id integer primary key, state text not null)")
    setup.execute("insert into job values (1, 'new'), (2, 'new'), (3, 'new')")
    workers = [
        psycopg.connect(host="127.0.0.1", port=port, user="maestro", dbname="tpch")
        for _ in range(2)
    ]
    taken = []
    for w in workers:
        w.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        assert w.execute("show transaction_isolation").fetchone() == ("read committed",)
        row = w.execute(
            "select id from job where state = %s order by id limit 1 for update skip locked",
            ("new",),
        ).fetchone()
        taken.append(row[0])
    assert taken == [1, 2], taken
    for w, job in zip(workers, taken):
        w.execute("update job set state = 'done' where id = %s", (job,))
        w.commit()
        w.close()
    rows = setup.execute("select id, state from job order by id").fetchall()
    assert rows == [(1, "done"), (2, "done"), (3, "new")], rows
print("psycopg: ok")
