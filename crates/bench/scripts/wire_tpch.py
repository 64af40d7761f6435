#!/usr/bin/env python3
"""TPC-H as SQL text over the PostgreSQL wire protocol (`maestro serve`, psycopg 3)
beside DuckDB in process, same queries, same parameters, same stop rule.

    pip install duckdb==2.0.0 tpchgen-cli==4.0.0 "psycopg[binary]"
    cargo build --release -p maestro-cli
    python3 crates/bench/scripts/wire_tpch.py --sf 1 --contexts 2 --streams 1,4,16 \
        --duration 20 --reps 3 --out docs/results/<date>/wire-tpch

What runs (like for like):
- Data: `maestro serve --sf SF` loads the tpchgen crate's data; DuckDB loads the same
  rows from `tpchgen-cli` (`duckdb_tpch.py`'s loader, imported, not copied).
- Work: the spec's SQL texts of `crates/tpch/answers/generate.py` with the parameter
  plan of `maestro tpch params --seed SEED` (stream s runs the spec's order for stream
  s+1 with parameters drawn once); Q15's view becomes a WITH query on both sides
  (`maestro serve` has no CREATE VIEW; DuckDB inlines a view anyway).
- Stop rule: `duckdb_tpch.py`'s fixed window — streams issue queries until DURATION
  seconds are up, only queries completed within the window count (queries/h =
  completed · 3600 / window), a query running at the deadline is waited for and
  counted as `late`.
- Clients: Maestro's stream s is its own psycopg connection (autocommit, text
  results fetched completely); DuckDB's is its own cursor of one in-process
  database with `threads = CONTEXTS`. DuckDB pays no protocol, so the ratio
  includes the wire's cost (serialisation, one round trip per query).
- Repetitions: REPS rounds; each round runs every stream count on both engines,
  the engine order alternating between rounds; both databases are loaded once,
  outside every window.
- Answers: before timing, each of the 22 queries with the validation parameters
  runs on both engines and the results must agree (numbers within 1e-6 relative
  or one cent, strings and dates exactly, same row order); any difference stops
  the run.
- `--refresh`: the spec's refresh stream beside the query streams — in a window of
  n streams, n RF1/RF2 pairs one after another from the window's start, on their own
  connection (Maestro: `CALL maestro.tpch_rf1(k)` / `tpch_rf2(k)` into the tables'
  deltas; DuckDB: `duckdb_tpch.py`'s rf1/rf2, one transaction each, on its own
  cursor). The sets are the same on both (`maestro tpch refresh --export-sets` for
  DuckDB; RF1's rows generated ahead on the server with `CALL
  maestro.tpch_refresh_sets`, as DuckDB's are files before the run); set numbers
  continue across windows. Pairs still running at the deadline finish after it
  (counted as `refresh_late`). After the last round the 22 answers are compared
  again: both engines then hold the same refreshed rows.

Prints a table and writes OUT/wire-tpch.json: per engine and stream count the
queries/h of every round (samples, median, min, max) and the per-round ratio
maestro ÷ duckdb (median, min, max).
"""

import argparse
import datetime
import decimal
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def load_duckdb_tpch():
    spec = importlib.util.spec_from_file_location("duckdb_tpch", HERE / "duckdb_tpch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


D = load_duckdb_tpch()
G = D.G
log = D.log

try:
    import psycopg
except ImportError:
    sys.exit("wire_tpch.py: the Python package 'psycopg' is missing: pip install 'psycopg[binary]'")

Q15_VIEW = re.compile(
    r"create view revenue0 \(([^)]*)\) as(.*?);\s*(select.*?);\s*drop view revenue0;?\s*$",
    re.S | re.I)


def query_text(q, params):
    """The one statement both engines run for query q."""
    sql = G.substitute(G.QUERIES[q], params)
    if q == 15:
        m = Q15_VIEW.search(sql)
        if not m:
            sys.exit("wire_tpch.py: Q15's text no longer has the spec's view shape")
        sql = "with revenue0 (%s) as (%s) %s" % (m.group(1), m.group(2).strip(), m.group(3))
    statements = G.statements(sql)
    if len(statements) != 1:
        sys.exit("wire_tpch.py: Q%d is %d statements" % (q, len(statements)))
    return statements[0]


class Maestro:
    """`maestro serve` on a free port, loaded with TPC-H at `sf`."""

    def __init__(self, binary, sf, contexts):
        self.proc = subprocess.Popen(
            [binary, "serve", "--port", "0", "--sf", str(sf), "--contexts", str(contexts)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        start = time.perf_counter()
        line = self.proc.stdout.readline()
        m = re.search(r"listening on ([\d.]+):(\d+)", line)
        if not m:
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            sys.exit("wire_tpch.py: maestro serve did not start: %r %s" % (line, err))
        self.host, self.port = m.group(1), int(m.group(2))
        self.load_s = time.perf_counter() - start
        # Drain stderr so the server never blocks on a full pipe.
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        log("maestro serve on %s:%d, loaded in %.2f s" % (self.host, self.port, self.load_s))

    def connect(self):
        return psycopg.connect(host=self.host, port=self.port, user="bench", dbname="tpch",
                               autocommit=True)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def run_one(cur, sql):
    start = time.perf_counter()
    cur.execute(sql)
    rows = cur.fetchall()
    return time.perf_counter() - start, rows


def same_value(a, b):
    if isinstance(a, (int, float, decimal.Decimal)) and isinstance(b, (int, float, decimal.Decimal)):
        a, b = float(a), float(b)
        return abs(a - b) <= max(1e-6 * max(abs(a), abs(b)), 0.005)
    if isinstance(a, (datetime.date, datetime.datetime)) or isinstance(b, (datetime.date, datetime.datetime)):
        return str(a)[:10] == str(b)[:10]
    return str(a).rstrip() == str(b).rstrip()


def check_answers(maestro_conn, duck, sf):
    cur, dcur = maestro_conn.cursor(), duck.cursor()
    for q in range(1, 23):
        sql = query_text(q, G.validation_params(q, sf))
        _, mine = run_one(cur, sql)
        _, theirs = run_one(dcur, sql)
        if len(mine) != len(theirs):
            sys.exit("wire_tpch.py: Q%d: %d rows over the wire, DuckDB %d"
                     % (q, len(mine), len(theirs)))
        for i, (r, s) in enumerate(zip(mine, theirs)):
            if len(r) != len(s) or not all(same_value(a, b) for a, b in zip(r, s)):
                sys.exit("wire_tpch.py: Q%d row %d: %r over the wire, DuckDB %r" % (q, i, r, s))
    log("answers: all 22 queries agree (validation parameters)")


def window(open_stream, plan, n, duration, refresher=None):
    """n streams for `duration` seconds under duckdb_tpch.py's fixed-window rule,
    beside n refresh pairs when `refresher` is given; returns (completed latencies,
    late, refresh record or None)."""
    def run_entry(cur, _s, e):
        t, _ = run_one(cur, query_text(e["query"], e["params"]))
        return t

    record, thread = None, None
    if refresher is not None:
        record = {"rf1_s": [], "rf2_s": [], "refresh_late": 0, "errors": []}
        start = time.perf_counter()

        def refresh_stream():
            try:
                for _ in range(n):
                    rf1_s, rf2_s = refresher.pair()
                    record["rf1_s"].append(rf1_s)
                    record["rf2_s"].append(rf2_s)
                    if time.perf_counter() > start + duration:
                        record["refresh_late"] += 1
            except Exception as ex:  # reported, never swallowed
                record["errors"].append(str(ex))

        thread = threading.Thread(target=refresh_stream)
        thread.start()
    latencies, late, _ = D.fixed_window(n, duration, plan, lambda _s: open_stream(), run_entry)
    if thread is not None:
        thread.join()
        if record["errors"]:
            sys.exit("wire_tpch.py: refresh stream: %s" % record["errors"][0])
    return latencies, late, record


class MaestroRefresher:
    """Maestro's refresh stream: RF1/RF2 of the next set through CALL."""

    def __init__(self, server):
        self.conn = server.connect()
        self.next_set = 1

    def pair(self):
        k, self.next_set = self.next_set, self.next_set + 1
        times = []
        for f in ("tpch_rf1", "tpch_rf2"):
            start = time.perf_counter()
            self.conn.execute("CALL maestro.%s(%d)" % (f, k))
            times.append(time.perf_counter() - start)
        return times


class DuckRefresher:
    """DuckDB's refresh stream: duckdb_tpch.py's rf1/rf2 on the exported sets."""

    def __init__(self, duck, sets):
        self.cur = duck.cursor()
        self.sets = sets
        self.next_set = 1

    def pair(self):
        k, self.next_set = self.next_set, self.next_set + 1
        times = []
        for function in (D.rf1, D.rf2):
            start = time.perf_counter()
            function(self.cur, self.sets, k)
            times.append(time.perf_counter() - start)
        return times


class Session:
    """A psycopg connection as a stream's handle (closing closes the connection)."""

    def __init__(self, server):
        self.conn = server.connect()
        self.cur = self.conn.cursor()

    def execute(self, sql):
        return self.cur.execute(sql)

    def fetchall(self):
        return self.cur.fetchall()

    def close(self):
        self.conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--contexts", type=int, default=os.cpu_count())
    ap.add_argument("--streams", default="1,4,16")
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--maestro", default=str(ROOT / "target" / "release" / "maestro"))
    ap.add_argument("--data-dir", help="tpchgen-cli data for DuckDB (default as duckdb_tpch.py)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--refresh", action="store_true",
                    help="run the spec's refresh stream beside the query streams")
    args = ap.parse_args()
    streams = [int(s) for s in args.streams.split(",")]
    if args.sf <= 0 or args.contexts < 1 or args.duration <= 0 or args.reps < 1 \
            or not streams or min(streams) < 1:
        ap.error("--sf, --duration must be positive; --contexts, --reps, --streams at least 1")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    params = out / "params.json"
    subprocess.run([args.maestro, "tpch", "params", "--sf", str(args.sf), "--seed",
                    str(args.seed), "--streams", str(max(streams)), "--out", str(params)],
                   check=True, stdout=subprocess.DEVNULL)
    plan = D.read_plan(params, args.sf, streams)
    pairs = args.reps * sum(streams) if args.refresh else 0
    # The exported sets are inputs, not results: a temporary directory.
    sets = Path(tempfile.mkdtemp(prefix="wire-tpch-sets-"))
    if pairs:
        subprocess.run([args.maestro, "tpch", "refresh", "--sf", str(args.sf), "--pairs",
                        str(pairs), "--export-sets", str(sets)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    duck, duck_load_s = D.connect(args.sf, args.contexts, args.data_dir)
    server = Maestro(args.maestro, args.sf, args.contexts)
    try:
        with server.connect() as c:
            check_answers(c, duck, args.sf)
            if pairs:
                c.execute("CALL maestro.tpch_refresh_sets(1, %d)" % pairs)
        engines = {"maestro-wire": lambda: Session(server),
                   "duckdb-in-process": duck.cursor}
        refreshers = {"maestro-wire": MaestroRefresher(server),
                      "duckdb-in-process": DuckRefresher(duck, sets)} if pairs else {}
        samples = {(e, n): [] for e in engines for n in streams}
        late = {(e, n): 0 for e in engines for n in streams}
        refreshes = {(e, n): [] for e in engines for n in streams}
        for rep in range(args.reps):
            order = list(engines) if rep % 2 == 0 else list(reversed(engines))
            for n in streams:
                for e in order:
                    lat, l, rec = window(engines[e], plan, n, args.duration,
                                         refreshers.get(e))
                    if rec is not None:
                        refreshes[(e, n)].append(rec)
                    if not lat:
                        sys.exit("wire_tpch.py: %s, %d stream(s): no query completed" % (e, n))
                    qph = len(lat) * 3600 / args.duration
                    samples[(e, n)].append(qph)
                    late[(e, n)] += l
                    log("round %d/%d, %s, %d stream(s): %.0f queries/h (%d late)%s"
                        % (rep + 1, args.reps, e, n, qph, l,
                           "" if rec is None else ", %d refresh pairs (%d after the window)"
                           % (len(rec["rf1_s"]), rec["refresh_late"])))
        if pairs:
            with server.connect() as c:
                check_answers(c, duck, args.sf)
            log("answers after %d refresh pairs on both engines: all 22 agree" % pairs)
    finally:
        server.stop()
        shutil.rmtree(sets, ignore_errors=True)

    results, ratios = [], []
    for (e, n), xs in samples.items():
        results.append({"engine": e, "streams": n, "metric": "queries_per_hour",
                        "samples": xs, "value": statistics.median(xs), "min": min(xs),
                        "max": max(xs), "late": late[(e, n)]})
        if refreshes[(e, n)]:
            results[-1]["refresh"] = refreshes[(e, n)]
    print("| streams | maestro-wire q/h | duckdb q/h | ratio median [min–max] |")
    print("|---|---|---|---|")
    for n in streams:
        m, d = samples[("maestro-wire", n)], samples[("duckdb-in-process", n)]
        r = [a / b for a, b in zip(m, d)]
        ratios.append({"streams": n, "ratio": statistics.median(r), "min": min(r),
                       "max": max(r), "samples": r})
        print("| %d | %.0f | %.0f | %.2f [%.2f–%.2f] |" % (
            n, statistics.median(m), statistics.median(d), statistics.median(r), min(r), max(r)))
    json.dump({"experiment": "tpch-wire-vs-duckdb", "sf": args.sf, "contexts": args.contexts,
               "duration_s": args.duration, "reps": args.reps, "seed": args.seed,
               "duckdb": G.duckdb.__version__, "psycopg": psycopg.__version__,
               "load_seconds": {"maestro-wire": server.load_s, "duckdb-in-process": duck_load_s},
               "rule": "fixed-window", "refresh_pairs": pairs, "results": results,
               "ratios": ratios},
              open(out / "wire-tpch.json", "w"), indent=1)


if __name__ == "__main__":
    main()
