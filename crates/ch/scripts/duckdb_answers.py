#!/usr/bin/env python3
"""CH-benCHmark answers from DuckDB, the independent engine the tests check
Maestro against.

usage: duckdb_answers.py DIR [OUT] [--queries 1,6,...] [--max-rows N]

Loads the tables `maestro ch snapshot --out DIR` wrote (DIR/<table>.csv),
runs the CH queries (BenchBase's texts; `oorder` is a view of `orders`, Q15's
view a CTE) and writes each answer as OUT/q<N>.csv (OUT defaults to
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

QUERIES = {
 1: """SELECT ol_number, sum(ol_quantity) AS sum_qty, sum(ol_amount) AS sum_amount,
       avg(ol_quantity) AS avg_qty, avg(ol_amount) AS avg_amount, count(*) AS count_order
       FROM order_line WHERE ol_delivery_d > '2007-01-02 00:00:00.000000'
       GROUP BY ol_number ORDER BY ol_number""",
 2: """SELECT su_suppkey, su_name, n_name, i_id, i_name, su_address, su_phone, su_comment
       FROM item, supplier, stock, nation, region,
        (SELECT s_i_id AS m_i_id, MIN(s_quantity) AS m_s_quantity
         FROM stock, supplier, nation, region
         WHERE MOD((s_w_id*s_i_id), 10000)=su_suppkey AND su_nationkey=n_nationkey
           AND n_regionkey=r_regionkey AND r_name LIKE 'Europ%' GROUP BY s_i_id) m
       WHERE i_id = s_i_id AND MOD((s_w_id * s_i_id), 10000) = su_suppkey
         AND su_nationkey = n_nationkey AND n_regionkey = r_regionkey AND i_data LIKE '%b'
         AND r_name LIKE 'Europ%' AND i_id=m_i_id AND s_quantity = m_s_quantity
       ORDER BY n_name, su_name, i_id""",
 3: """SELECT ol_o_id, ol_w_id, ol_d_id, sum(ol_amount) AS revenue, o_entry_d
       FROM customer, new_order, oorder, order_line
       WHERE c_state LIKE 'A%' AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
         AND no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id AND ol_w_id = o_w_id
         AND ol_d_id = o_d_id AND ol_o_id = o_id AND o_entry_d > '2007-01-02 00:00:00.000000'
       GROUP BY ol_o_id, ol_w_id, ol_d_id, o_entry_d ORDER BY revenue DESC, o_entry_d""",
 4: """SELECT o_ol_cnt, count(*) AS order_count FROM oorder
       WHERE exists (SELECT * FROM order_line WHERE o_id = ol_o_id AND o_w_id = ol_w_id
                     AND o_d_id = ol_d_id AND ol_delivery_d >= o_entry_d)
       GROUP BY o_ol_cnt ORDER BY o_ol_cnt""",
 5: """SELECT n_name, sum(ol_amount) AS revenue
       FROM customer, oorder, order_line, stock, supplier, nation, region
       WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id AND ol_o_id = o_id
         AND ol_w_id = o_w_id AND ol_d_id=o_d_id AND ol_w_id = s_w_id AND ol_i_id = s_i_id
         AND MOD((s_w_id * s_i_id), 10000) = su_suppkey
         AND ascii(substring(c_state from 1 for 1)) = su_nationkey
         AND su_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'Europe'
         AND o_entry_d >= '2007-01-02 00:00:00.000000'
       GROUP BY n_name ORDER BY revenue DESC""",
 6: """SELECT sum(ol_amount) AS revenue FROM order_line
       WHERE ol_delivery_d >= '1999-01-01 00:00:00.000000' AND ol_delivery_d < '2020-01-01 00:00:00.000000'
         AND ol_quantity BETWEEN 1 AND 100000""",
 7: """SELECT su_nationkey AS supp_nation, substring(c_state from 1 for 1) AS cust_nation,
       extract(YEAR FROM o_entry_d) AS l_year, sum(ol_amount) AS revenue
       FROM supplier, stock, order_line, oorder, customer, nation n1, nation n2
       WHERE ol_supply_w_id = s_w_id AND ol_i_id = s_i_id AND MOD ((s_w_id * s_i_id), 10000) = su_suppkey
         AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND c_id = o_c_id
         AND c_w_id = o_w_id AND c_d_id = o_d_id AND su_nationkey = n1.n_nationkey
         AND ascii(substring(c_state from 1 for 1)) = n2.n_nationkey
         AND ((n1.n_name = 'Germany' AND n2.n_name = 'Cambodia') OR (n1.n_name = 'Cambodia' AND n2.n_name = 'Germany'))
       GROUP BY su_nationkey, cust_nation, l_year ORDER BY su_nationkey, cust_nation, l_year""",
 8: """SELECT extract(YEAR FROM o_entry_d) AS l_year,
       sum(CASE WHEN n2.n_name = 'Germany' THEN ol_amount ELSE 0 END) / sum(ol_amount) AS mkt_share
       FROM item, supplier, stock, order_line, oorder, customer, nation n1, nation n2, region
       WHERE i_id = s_i_id AND ol_i_id = s_i_id AND ol_supply_w_id = s_w_id
         AND MOD ((s_w_id * s_i_id), 10000) = su_suppkey AND ol_w_id = o_w_id AND ol_d_id = o_d_id
         AND ol_o_id = o_id AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
         AND n1.n_nationkey = ascii(substring(c_state from 1 for 1)) AND n1.n_regionkey = r_regionkey
         AND ol_i_id < 1000 AND r_name = 'Europe' AND su_nationkey = n2.n_nationkey
         AND i_data LIKE '%b' AND i_id = ol_i_id
       GROUP BY l_year ORDER BY l_year""",
 9: """SELECT n_name, extract(YEAR FROM o_entry_d) AS l_year, sum(ol_amount) AS sum_profit
       FROM item, stock, supplier, order_line, oorder, nation
       WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id AND MOD ((s_w_id * s_i_id), 10000) = su_suppkey
         AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND ol_i_id = i_id
         AND su_nationkey = n_nationkey AND i_data LIKE '%bb'
       GROUP BY n_name, l_year ORDER BY n_name, l_year DESC""",
 10: """SELECT c_id, c_last, sum(ol_amount) AS revenue, c_city, c_phone, n_name
       FROM customer, oorder, order_line, nation
       WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id AND ol_w_id = o_w_id
         AND ol_d_id = o_d_id AND ol_o_id = o_id AND o_entry_d >= '2007-01-02 00:00:00.000000'
         AND o_entry_d <= ol_delivery_d AND n_nationkey = ascii(substring(c_state from 1 for 1))
       GROUP BY c_id, c_last, c_city, c_phone, n_name ORDER BY revenue DESC""",
 11: """SELECT s_i_id, sum(s_order_cnt) AS ordercount FROM stock, supplier, nation
       WHERE mod((s_w_id * s_i_id), 10000) = su_suppkey AND su_nationkey = n_nationkey AND n_name = 'Germany'
       GROUP BY s_i_id HAVING sum(s_order_cnt) >
        (SELECT sum(s_order_cnt) * .005 FROM stock, supplier, nation
         WHERE mod((s_w_id * s_i_id), 10000) = su_suppkey AND su_nationkey = n_nationkey AND n_name = 'Germany')
       ORDER BY ordercount DESC""",
 12: """SELECT o_ol_cnt,
       sum(CASE WHEN o_carrier_id = 1 OR o_carrier_id = 2 THEN 1 ELSE 0 END) AS high_line_count,
       sum(CASE WHEN o_carrier_id <> 1 AND o_carrier_id <> 2 THEN 1 ELSE 0 END) AS low_line_count
       FROM oorder, order_line
       WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND o_entry_d <= ol_delivery_d
         AND ol_delivery_d < '2020-01-01 00:00:00.000000'
       GROUP BY o_ol_cnt ORDER BY o_ol_cnt""",
 13: """SELECT c_count, count(*) AS custdist FROM
        (SELECT c_id, count(o_id) AS c_count FROM customer LEFT OUTER JOIN oorder ON
          (c_w_id = o_w_id AND c_d_id = o_d_id AND c_id = o_c_id AND o_carrier_id > 8)
         GROUP BY c_id) AS c_orders
       GROUP BY c_count ORDER BY custdist DESC, c_count DESC""",
 14: """SELECT (100.00 * sum(CASE WHEN i_data LIKE 'PR%' THEN ol_amount ELSE 0 END) / (1 + sum(ol_amount))) AS promo_revenue
       FROM order_line, item
       WHERE ol_i_id = i_id AND ol_delivery_d >= '2007-01-02 00:00:00.000000'
         AND ol_delivery_d < '2020-01-02 00:00:00.000000'""",
 15: """WITH revenue0 (supplier_no, total_revenue) AS
        (SELECT mod((s_w_id * s_i_id),10000) as supplier_no, sum(ol_amount) as total_revenue
         FROM order_line, stock WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id
           AND ol_delivery_d >= '2007-01-02 00:00:00.000000' GROUP BY supplier_no)
       SELECT su_suppkey, su_name, su_address, su_phone, total_revenue FROM supplier, revenue0
       WHERE su_suppkey = supplier_no AND total_revenue = (select max(total_revenue) from revenue0)
       ORDER BY su_suppkey""",
 16: """SELECT i_name, substring(i_data from 1 for 3) AS brand, i_price,
       count(DISTINCT (mod((s_w_id * s_i_id),10000))) AS supplier_cnt
       FROM stock, item
       WHERE i_id = s_i_id AND i_data NOT LIKE 'zz%'
         AND (mod((s_w_id * s_i_id),10000) NOT IN (SELECT su_suppkey FROM supplier WHERE su_comment LIKE '%bad%'))
       GROUP BY i_name, brand, i_price ORDER BY supplier_cnt DESC""",
 17: """SELECT SUM(ol_amount) / 2.0 AS avg_yearly FROM order_line,
        (SELECT i_id, AVG (ol_quantity) AS a FROM item, order_line
         WHERE i_data LIKE '%b' AND ol_i_id = i_id GROUP BY i_id) t
       WHERE ol_i_id = t.i_id AND ol_quantity < t.a""",
 18: """SELECT c_last, c_id, o_id, o_entry_d, o_ol_cnt, sum(ol_amount) AS amount_sum
       FROM customer, oorder, order_line
       WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id AND ol_w_id = o_w_id
         AND ol_d_id = o_d_id AND ol_o_id = o_id
       GROUP BY o_id, o_w_id, o_d_id, c_id, c_last, o_entry_d, o_ol_cnt
       HAVING sum(ol_amount) > 200 ORDER BY amount_sum DESC, o_entry_d""",
 19: """SELECT sum(ol_amount) AS revenue FROM order_line, item
       WHERE (ol_i_id = i_id AND i_data LIKE '%a' AND ol_quantity >= 1 AND ol_quantity <= 10
              AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 3))
          OR (ol_i_id = i_id AND i_data LIKE '%b' AND ol_quantity >= 1 AND ol_quantity <= 10
              AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 4))
          OR (ol_i_id = i_id AND i_data LIKE '%c' AND ol_quantity >= 1 AND ol_quantity <= 10
              AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 5, 3))""",
 20: """SELECT su_name, su_address FROM supplier, nation
       WHERE su_suppkey IN
        (SELECT mod(s_i_id * s_w_id, 10000) FROM stock
         INNER JOIN item ON i_id = s_i_id INNER JOIN order_line ON ol_i_id = s_i_id
         WHERE ol_delivery_d > '2010-05-23 12:00:00' AND i_data LIKE 'co%'
         GROUP BY s_i_id, s_w_id, s_quantity HAVING 2*s_quantity > sum(ol_quantity))
         AND su_nationkey = n_nationkey AND n_name = 'Germany'
       ORDER BY su_name""",
 21: """SELECT su_name, count(*) AS numwait FROM supplier, order_line l1, oorder, stock, nation
       WHERE ol_o_id = o_id AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_w_id = s_w_id
         AND ol_i_id = s_i_id AND mod((s_w_id * s_i_id),10000) = su_suppkey
         AND l1.ol_delivery_d > o_entry_d
         AND NOT EXISTS (SELECT * FROM order_line l2 WHERE l2.ol_o_id = l1.ol_o_id
                         AND l2.ol_w_id = l1.ol_w_id AND l2.ol_d_id = l1.ol_d_id
                         AND l2.ol_delivery_d > l1.ol_delivery_d)
         AND su_nationkey = n_nationkey AND n_name = 'Germany'
       GROUP BY su_name ORDER BY numwait DESC, su_name""",
 22: """SELECT substring(c_state from 1 for 1) AS country, count(*) AS numcust, sum(c_balance) AS totacctbal
       FROM customer
       WHERE substring(c_phone from 1 for 1) IN ('1', '2', '3', '4', '5', '6', '7')
         AND c_balance > (SELECT avg(c_balance) FROM customer WHERE c_balance > 0.00
                          AND substring(c_phone from 1 for 1) IN ('1', '2', '3', '4', '5', '6', '7'))
         AND NOT EXISTS (SELECT * FROM oorder WHERE o_c_id = c_id AND o_w_id = c_w_id AND o_d_id = c_d_id)
       GROUP BY substring(c_state from 1 for 1) ORDER BY substring(c_state,1,1)""",
}


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
