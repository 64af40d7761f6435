#!/usr/bin/env python3
"""Scans, filters and aggregates over stored columns of each SQL type — BIGINT,
NUMERIC, DOUBLE PRECISION, BOOLEAN — through the PostgreSQL wire protocol
(`maestro serve`, psycopg 3), for one or more Maestro builds side by side and
DuckDB in process as the reference.

    pip install duckdb "psycopg[binary]"
    python3 crates/bench/scripts/typed_scans.py --rows 4000000 --reps 3 \
        --out docs/results/<date>/typed-scans before=OLD/maestro after=target/release/maestro

What runs (like for like):
- Data: one table t(id BIGINT, x DOUBLE PRECISION, b BOOLEAN, n NUMERIC(12,2))
  of ROWS rows from a seeded generator (x uniform in [-1000, 1000), n = x rounded
  to cents, b true for a third of the rows), written once as CSV and loaded by
  COPY into every engine; Maestro's delta is merged (`CALL maestro.merge()`) so
  every build scans a main, DuckDB's table is a native table, `threads =
  CONTEXTS`. Maestro runs with `--contexts CONTEXTS`.
- Work: the QUERIES below — the same filter and aggregate over each type, so a
  type's cost is read beside BIGINT's and NUMERIC's on one engine.
- Stop rule: every query runs RUNS times per round (after one unmeasured run),
  the round's time is the median; REPS rounds, the variants' order rotating
  between rounds. Maestro's times include one wire round trip per query
  (DuckDB's none).
- Answers: before timing, every query's rows must agree across all variants
  (counts exactly, doubles within 1e-9 relative); a difference stops the run.

Prints a table and writes OUT/typed-scans.json: per variant and query the
round times (samples, median, min, max) and per-round ratios, ours ÷ peer:
each later build ÷ the first, each build ÷ DuckDB (median, min, max).
"""

import argparse
import datetime
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

try:
    import psycopg
except ImportError:
    sys.exit("typed_scans.py: pip install 'psycopg[binary]'")

QUERIES = [
    ("filter bigint", "SELECT count(*) FROM t WHERE id % 4 = 0 AND id > 1000"),
    ("filter numeric", "SELECT count(*) FROM t WHERE n > 500.00"),
    ("filter double", "SELECT count(*) FROM t WHERE x > 500"),
    ("filter boolean", "SELECT count(*) FROM t WHERE b"),
    ("range double", "SELECT count(*) FROM t WHERE x BETWEEN -10 AND 10"),
    ("sum numeric", "SELECT sum(n) FROM t"),
    ("sum double", "SELECT sum(x) FROM t"),
    ("min/max/avg double", "SELECT min(x), max(x), avg(x) FROM t"),
    ("filter boolean, sum double", "SELECT sum(x) FROM t WHERE b AND x > 0"),
    ("group by boolean", "SELECT b, count(*), sum(x) FROM t GROUP BY b ORDER BY b"),
]


def log(msg):
    print("[typed_scans] " + msg, file=sys.stderr, flush=True)


def write_csv(path, rows, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for i in range(1, rows + 1):
            x = rng.uniform(-1000.0, 1000.0)
            f.write("%d,%r,%s,%.2f\n" % (i, x, "t" if rng.random() < 1 / 3 else "f", x))


class Maestro:
    def __init__(self, name, binary, contexts, csv):
        self.name = name
        self.proc = subprocess.Popen(
            [binary, "serve", "--port", "0", "--contexts", str(contexts)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on ([\d.]+):(\d+)", line)
        if not m:
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            sys.exit("typed_scans.py: %s did not start: %r %s" % (binary, line, err))
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        self.conn = psycopg.connect(host=m.group(1), port=int(m.group(2)), user="bench",
                                    dbname="bench", autocommit=True)
        start = time.perf_counter()
        self.conn.execute(
            "CREATE TABLE t (id BIGINT NOT NULL, x DOUBLE PRECISION NOT NULL, "
            "b BOOLEAN NOT NULL, n NUMERIC(12,2) NOT NULL)")
        with self.conn.cursor() as cur, open(csv, "rb") as f:
            with cur.copy("COPY t FROM STDIN (FORMAT csv)") as copy:
                while chunk := f.read(1 << 20):
                    copy.write(chunk)
        self.conn.execute("CALL maestro.merge()")
        log("%s loaded in %.1f s" % (name, time.perf_counter() - start))

    def run(self, sql):
        return self.conn.execute(sql).fetchall()

    def close(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait()


class DuckDb:
    def __init__(self, contexts, csv):
        import duckdb
        self.name = "duckdb"
        self.conn = duckdb.connect()
        self.conn.execute("SET threads = %d" % contexts)
        start = time.perf_counter()
        self.conn.execute(
            "CREATE TABLE t (id BIGINT NOT NULL, x DOUBLE NOT NULL, b BOOLEAN NOT NULL, "
            "n DECIMAL(12,2) NOT NULL)")
        self.conn.execute("COPY t FROM '%s' (FORMAT csv, HEADER false)" % csv)
        log("duckdb loaded in %.1f s" % (time.perf_counter() - start))

    def run(self, sql):
        return self.conn.execute(sql).fetchall()

    def close(self):
        self.conn.close()


def same(a, b):
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        if len(ra) != len(rb):
            return False
        for x, y in zip(ra, rb):
            if isinstance(x, bool) or isinstance(y, bool):
                if str(x).lower()[:1] != str(y).lower()[:1]:
                    return False
                continue
            try:
                fx, fy = float(x), float(y)
            except (TypeError, ValueError):
                if x != y:
                    return False
                continue
            if abs(fx - fy) > 1e-9 * max(1.0, abs(fx), abs(fy)):
                return False
    return True


def summary(xs):
    return {"samples": xs, "median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="+", help="NAME=PATH of a maestro binary")
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5, help="timed runs per query and round")
    ap.add_argument("--contexts", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--no-duckdb", action="store_true")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.reps < 1 or args.runs < 1 or args.rows < 1:
        sys.exit("typed_scans.py: --rows, --reps and --runs must be at least 1")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "t.csv")
        log("writing %d rows" % args.rows)
        write_csv(csv, args.rows, args.seed)
        engines = []
        for v in args.variants:
            name, _, path = v.partition("=")
            if not path or not os.access(path, os.X_OK):
                sys.exit("typed_scans.py: %r is not NAME=PATH of an executable" % v)
            engines.append(Maestro(name, path, args.contexts, csv))
        if not args.no_duckdb:
            engines.append(DuckDb(args.contexts, csv))
        for label, sql in QUERIES:
            answers = [e.run(sql) for e in engines]
            for e, a in zip(engines[1:], answers[1:]):
                if not same(answers[0], a):
                    sys.exit("typed_scans.py: %s: %s answered %r, %s %r"
                             % (label, engines[0].name, answers[0], e.name, a))
        log("answers agree across %s" % ", ".join(e.name for e in engines))
        times = {e.name: {label: [] for label, _ in QUERIES} for e in engines}
        for rep in range(args.reps):
            k = rep % len(engines)
            order = engines[k:] + engines[:k]
            log("round %d/%d: %s" % (rep + 1, args.reps, ", ".join(e.name for e in order)))
            for e in order:
                for label, sql in QUERIES:
                    e.run(sql)
                    ts = []
                    for _ in range(args.runs):
                        t0 = time.perf_counter()
                        e.run(sql)
                        ts.append((time.perf_counter() - t0) * 1000.0)
                    times[e.name][label].append(statistics.median(ts))
        for e in engines:
            e.close()
    names = [e.name for e in engines]
    builds = [n for n in names if n != "duckdb"]
    # Ours ÷ peer, per round: each later build ÷ the first, each build ÷ DuckDB.
    pairs = [(n, builds[0]) for n in builds[1:]]
    if "duckdb" in names:
        pairs += [(n, "duckdb") for n in builds]
    result = {
        "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "rows": args.rows, "reps": args.reps, "runs": args.runs,
        "contexts": args.contexts, "seed": args.seed,
        "queries": [{"label": label, "sql": sql} for label, sql in QUERIES],
        "ms": {name: {label: summary(xs) for label, xs in per.items()}
               for name, per in times.items()},
        "ratios": {
            "%s / %s" % (a, b): {
                label: summary([x / y for x, y in zip(times[a][label], times[b][label])])
                for label, _ in QUERIES}
            for a, b in pairs},
    }
    (out / "typed-scans.json").write_text(json.dumps(result, indent=2) + "\n")
    print("| query | " + " | ".join("%s ms" % n for n in names) + " | "
          + " | ".join("%s ÷ %s" % p for p in pairs) + " |")
    print("|---" * (1 + len(names) + len(pairs)) + "|")
    for label, _ in QUERIES:
        cells = ["%.1f [%.1f–%.1f]" % tuple(result["ms"][n][label][f]
                                           for f in ("median", "min", "max")) for n in names]
        ratios = ["%.2f [%.2f–%.2f]" % tuple(result["ratios"]["%s / %s" % p][label][f]
                                             for f in ("median", "min", "max"))
                  for p in pairs]
        print("| %s | %s | %s |" % (label, " | ".join(cells), " | ".join(ratios)))
    log("wrote %s" % (out / "typed-scans.json"))


if __name__ == "__main__":
    main()
