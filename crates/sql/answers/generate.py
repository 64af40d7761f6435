#!/usr/bin/env python3
"""Expected answers for maestro-sql's query tests, computed by an independent engine.

    pip install duckdb tpchgen-cli        # this script installs nothing itself
    python3 crates/sql/answers/generate.py

For every `crates/sql/tests/queries/*.sql`, runs the statement in DuckDB over the
TPC-H SF 0.01 data Maestro loads and writes `crates/sql/answers/sf0.01/<name>.csv`.

The data, its loading and the CSV format are those of the TPC-H answers
(`crates/tpch/answers/generate.py`, imported here, not copied): `tpchgen-cli`
4.0.0 writes the same rows as the `tpchgen` crate Maestro loads; the tables get the
spec's types (DECIMAL(15,2), DATE, INTEGER, BIGINT, VARCHAR); decimals are written
with their scale, doubles as Python's repr, dates as YYYY-MM-DD. The test
(`crates/sql/tests/answers.rs`) compares with `maestro_tpch::queries::check`:
header names, row order, exact integers/strings/dates, decimals after rounding to
cents, doubles within a relative tolerance.

Every query must order its rows completely (ties broken by a unique column) or
return one row, so that the expected order is the only correct one; this is
checked by reading the queries, not by the script.
"""

import importlib.util
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = HERE.parent / "tests" / "queries"
OUT = HERE / "sf0.01"
SF = 0.01


def tpch_generator():
    path = HERE.parent.parent / "tpch" / "answers" / "generate.py"
    spec = importlib.util.spec_from_file_location("tpch_answers_generate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    g = tpch_generator()
    OUT.mkdir(parents=True, exist_ok=True)
    files = sorted(QUERIES.glob("*.sql"))
    if not files:
        sys.exit("generate.py: no queries in %s" % QUERIES)
    with tempfile.TemporaryDirectory() as tmp:
        g.generate_data(SF, tmp)
        con = g.load(tmp, SF)
        written = set()
        for f in files:
            sql = f.read_text()
            cur = con.execute(sql)
            header = [d[0] for d in cur.description]
            rows = cur.fetchall()
            out = OUT / (f.stem + ".csv")
            out.write_text(g.to_csv(header, rows))
            written.add(out.name)
            print("%-32s %4d row(s)" % (f.stem, len(rows)))
        for stale in OUT.glob("*.csv"):
            if stale.name not in written:
                stale.unlink()
                print("removed stale", stale.name)
    print("duckdb", g.duckdb.__version__, "|", g.tool_version(g.TPCHGEN))


if __name__ == "__main__":
    main()
