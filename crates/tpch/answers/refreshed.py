#!/usr/bin/env python3
"""DuckDB's answers to the 22 TPC-H queries after refresh pairs, for Maestro's
refresh functions (RF1/RF2 as MVCC transactions) to be checked against.

Run from the repository root:

    pip install duckdb==2.0.0 tpchgen-cli==4.0.0      # as for generate.py
    cargo run --release -p maestro-cli -- tpch refresh --sf 0.01 --pairs 2 --export-sets /tmp/sets
    python3 crates/tpch/answers/refreshed.py --sf 0.01 --pairs 2 --sets /tmp/sets
                                    # writes crates/tpch/answers/sf0.01-refresh2/

What it does: generates the same data as generate.py (tpchgen-cli), loads it into
DuckDB the same way, then applies refresh pairs 1..N exactly as the spec's refresh
functions do (clause 2.5): RF1 number n inserts the rows of `orders.tbl.u<n>` and
`lineitem.tbl.u<n>`; RF2 number n deletes the orders whose keys `delete.<n>` lists
and their line items. The sets come from Maestro (`tpch refresh --export-sets`):
tpchgen has no refresh-set mode, so Maestro derives them from tpchgen's generators
(see crates/tpch/src/refresh.rs); DuckDB only applies them, so every query answer
below is DuckDB's. Checks: each RF1 adds exactly the listed rows, each RF2 deletes
exactly the listed orders (all of which exist) and leaves no line item without its
order. Then it runs the validation and random parameter sets of generate.py
(all_params; no boundary sets, they are chosen from the unrefreshed data) and writes
params.json, columns.json and q{n}_{set}.csv in generate.py's format.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate as g  # noqa: E402  (checks that duckdb and tpchgen-cli exist)


def count(con, sql):
    return con.execute(sql).fetchone()[0]


def read_tbl(table, path):
    cols = g.SCHEMA[table]
    read_cols = ", ".join("'%s': '%s'" % (c, t) for c, t in cols) + ", '_end': 'VARCHAR'"
    return ("select %s from read_csv('%s', delim='|', header=false, quote='', escape='', "
            "auto_detect=false, columns={%s})" % (", ".join(c for c, _ in cols), path, read_cols))


def apply_pair(con, sets, n):
    before_o = count(con, "select count(*) from orders")
    before_l = count(con, "select count(*) from lineitem")
    for table in ("orders", "lineitem"):
        path = sets / ("%s.tbl.u%d" % (table, n))
        lines = sum(1 for _ in open(path, "rb"))
        con.execute("insert into %s %s" % (table, read_tbl(table, path)))
        got = count(con, "select count(*) from %s" % table)
        want = (before_o if table == "orders" else before_l) + lines
        if got != want:
            g.die("RF1 %d: %s has %d rows, expected %d" % (n, table, got, want))
    keys = [int(line.split("|")[0]) for line in open(sets / ("delete.%d" % n))]
    con.execute("create or replace temp table doomed as select unnest(?) as k", [keys])
    present = count(con, "select count(*) from orders where o_orderkey in (select k from doomed)")
    if present != len(keys):
        g.die("RF2 %d: %d of %d keys to delete exist" % (n, present, len(keys)))
    con.execute("delete from lineitem where l_orderkey in (select k from doomed)")
    con.execute("delete from orders where o_orderkey in (select k from doomed)")
    orphans = count(con, "select count(*) from lineitem where l_orderkey not in "
                         "(select o_orderkey from orders)")
    if orphans:
        g.die("after RF2 %d: %d line items without their order" % (n, orphans))
    print("pair %d: orders %d -> %d, lineitem %d -> %d" % (
        n, before_o, count(con, "select count(*) from orders"), before_l,
        count(con, "select count(*) from lineitem")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sf", type=float, default=0.01)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--sets", type=Path, required=True,
                    help="directory of `maestro tpch refresh --export-sets`")
    ap.add_argument("--out", type=Path, default=None,
                    help="default: answers/sf<SF>-refresh<PAIRS>")
    args = ap.parse_args()
    out = args.out or HERE / ("sf%s-refresh%d" % (g.sf_label(args.sf), args.pairs))
    out.mkdir(parents=True, exist_ok=True)
    params = g.all_params(args.sf)
    results, columns = {}, {}
    with tempfile.TemporaryDirectory(prefix="tpch-refresh-") as d:
        g.generate_data(args.sf, d)
        con = g.load(d, args.sf)
        for n in range(1, args.pairs + 1):
            apply_pair(con, args.sets, n)
        for entry in params:
            q, s, p = entry["query"], entry["set"], entry["params"]
            header, types, rows = g.run_query(con, q, p)
            if header != g.COLUMNS[q]:
                g.die("Q%d: columns %s, expected %s" % (q, header, g.COLUMNS[q]))
            columns[q] = types
            results[(q, s)] = (header, rows)
        con.close()
    for old in out.glob("q*_*.csv"):
        old.unlink()
    for (q, s), (header, rows) in results.items():
        (out / ("q%d_%s.csv" % (q, s))).write_text(g.to_csv(header, rows))
    (out / "params.json").write_text(json.dumps(params, indent=1, ensure_ascii=False) + "\n")
    (out / "columns.json").write_text(json.dumps(
        {"q%d" % q: [{"name": n, "type": t} for n, t in zip(g.COLUMNS[q], columns[q])]
         for q in range(1, 23)}, indent=1) + "\n")
    print("wrote %d answers to %s" % (len(results), out))


if __name__ == "__main__":
    main()
