#!/usr/bin/env python3
"""CH-benCHmark answers from DuckDB, the independent engine the tests check
Maestro against.

usage: duckdb_answers.py DIR [OUT] [--queries 1,6,...] [--max-rows N]

Loads the tables `maestro ch snapshot --out DIR` wrote (DIR/<table>.csv),
runs the CH queries (BenchBase's texts, read from crates/ch/sql/qNN.sql;
`oorder` is a view of `orders`, Q15's view a CTE) and writes each answer as OUT/q<N>.csv (OUT defaults to
DIR/duckdb) in the format of Maestro's own q<N>.csv: header of the select
list, RFC 4180 quoting, NULL as an empty field, timestamps ISO 8601 UTC,
decimals exact, doubles unrounded (repr).

Ties: every ORDER BY gets the select-list columns appended (ascending, in
select-list order) so the order is total and equal to Maestro's, whose
queries break ties the same way; the set of rows is unchanged.

Long answers: with --max-rows N, a file keeps the first N rows and ends with
a line `# rows: TOTAL` (Maestro's comparison then checks the count and those
rows).
"""
import csv, datetime, decimal, os, sys

import duckdb

T = "TIMESTAMP"
MONEY = "DECIMAL(12,2)"
SCHEMA = {
    "warehouse": "w_id INT, w_name VARCHAR, w_street_1 VARCHAR, w_street_2 VARCHAR, w_city VARCHAR, "
                 "w_state VARCHAR, w_zip VARCHAR, w_tax DECIMAL(4,4), w_ytd " + MONEY,
    "district": "d_id INT, d_w_id INT, d_name VARCHAR, d_street_1 VARCHAR, d_street_2 VARCHAR, "
                "d_city VARCHAR, d_state VARCHAR, d_zip VARCHAR, d_tax DECIMAL(4,4), d_ytd " + MONEY +
                ", d_next_o_id INT",
    "customer": "c_id INT, c_d_id INT, c_w_id INT, c_first VARCHAR, c_middle VARCHAR, c_last VARCHAR, "
                "c_street_1 VARCHAR, c_street_2 VARCHAR, c_city VARCHAR, c_state VARCHAR, c_zip VARCHAR, "
                "c_phone VARCHAR, c_since " + T + ", c_credit VARCHAR, c_credit_lim " + MONEY +
                ", c_discount DECIMAL(4,4), c_balance " + MONEY + ", c_ytd_payment " + MONEY +
                ", c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR",
    "history": "h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT, h_date " + T +
               ", h_amount DECIMAL(6,2), h_data VARCHAR",
    "new_order": "no_o_id INT, no_d_id INT, no_w_id INT",
    "orders": "o_id INT, o_d_id INT, o_w_id INT, o_c_id INT, o_entry_d " + T +
              ", o_carrier_id INT, o_ol_cnt INT, o_all_local INT",
    "order_line": "ol_o_id INT, ol_d_id INT, ol_w_id INT, ol_number INT, ol_i_id INT, ol_supply_w_id INT, "
                  "ol_delivery_d " + T + ", ol_quantity INT, ol_amount DECIMAL(6,2), ol_dist_info VARCHAR",
    "item": "i_id INT, i_im_id INT, i_name VARCHAR, i_price DECIMAL(5,2), i_data VARCHAR",
    "stock": "s_i_id INT, s_w_id INT, s_quantity INT, " +
             ", ".join(f"s_dist_{i:02} VARCHAR" for i in range(1, 11)) +
             ", s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_data VARCHAR",
    "supplier": "su_suppkey INT, su_name VARCHAR, su_address VARCHAR, su_nationkey INT, su_phone VARCHAR, "
                "su_acctbal " + MONEY + ", su_comment VARCHAR",
    "nation": "n_nationkey INT, n_name VARCHAR, n_regionkey INT, n_comment VARCHAR",
    "region": "r_regionkey INT, r_name VARCHAR, r_comment VARCHAR",
}

# The query texts: one file per query under crates/ch/sql/ (q01.sql … q22.sql),
# the one copy the SQL front end's tests run too.
SQL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sql")
QUERIES = {}
for _n in range(1, 23):
    with open(os.path.join(SQL_DIR, f"q{_n:02}.sql")) as _f:
        QUERIES[_n] = _f.read().strip()


def field(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(v)


def main():
    args = []
    skip = False
    for a in sys.argv[1:]:
        if skip:
            skip = False
        elif a.startswith("--"):
            skip = True
        else:
            args.append(a)
    if not args:
        sys.exit(__doc__)
    src = args[0]
    out = args[1] if len(args) > 1 else os.path.join(src, "duckdb")
    wanted = sorted(QUERIES)
    if "--queries" in sys.argv:
        wanted = [int(q) for q in sys.argv[sys.argv.index("--queries") + 1].split(",")]
    os.makedirs(out, exist_ok=True)
    con = duckdb.connect()
    for table, columns in SCHEMA.items():
        con.execute(f"CREATE TABLE {table} ({columns})")
        con.execute(f"COPY {table} FROM '{os.path.join(src, table + '.csv')}' "
                    "(HEADER, TIMESTAMPFORMAT '%Y-%m-%dT%H:%M:%SZ')")
    con.execute("CREATE VIEW oorder AS SELECT * FROM orders")
    max_rows = None
    if "--max-rows" in sys.argv:
        max_rows = int(sys.argv[sys.argv.index("--max-rows") + 1])
    for q in wanted:
        sql = QUERIES[q]
        if "ORDER BY" in sql.upper():
            width = len(con.execute(f"SELECT * FROM ({sql}) LIMIT 0").description)
            sql += ", " + ", ".join(str(i) for i in range(1, width + 1))
        cur = con.execute(sql)
        header = [d[0] for d in cur.description]
        rows = cur.fetchall()
        with open(os.path.join(out, f"q{q}.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for row in rows[:max_rows]:
                w.writerow([field(v) for v in row])
            if max_rows is not None and len(rows) > max_rows:
                f.write(f"# rows: {len(rows)}\n")
    print(f"wrote {len(wanted)} answers to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
