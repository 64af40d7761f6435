#!/usr/bin/env python3
"""DuckDB on the same TPC-H data and queries as Maestro, for side-by-side numbers.

    pip install duckdb tpchgen-cli
    python3 crates/bench/scripts/duckdb_tpch.py single --sf 1 --threads 2 > duckdb.json
    maestro bench tpch-single --sf 1 --contexts 2 --duckdb duckdb.json
    python3 crates/bench/scripts/duckdb_tpch.py throughput --sf 1 --threads 2 --streams 1,4,16

Data: `tpchgen-cli` (the same generator as the `tpchgen` crate Maestro loads from),
cached in `--data-dir` (default /tmp/maestro-tpch-sf<SF>), loaded into an in-memory
DuckDB with the spec's types. Queries, parameter rules and value lists are those of
`crates/tpch/answers/generate.py` (imported, not copied): the spec's SQL, validation
parameters for `single`, random draws by the spec's rules for `throughput`.

`single` prints the JSON `maestro bench tpch-single --duckdb` reads (median and spread of
--repetitions per query, geometric mean). `throughput` runs N streams as N threads,
each on its own cursor (Q15's view is named per stream), and prints queries per
hour and p50/p99 latency per stream count (JSON with --json).

Like-for-like with `maestro tpch throughput` (what `tpch_vs_duckdb.sh` runs):

    maestro tpch params --sf 1 --seed 7 --streams 16 --out params.json
    maestro tpch throughput --sf 1 --params params.json --duration 20 --streams 1,4,16 ...
    python3 duckdb_tpch.py throughput --sf 1 --params params.json --duration 20 --streams 1,4,16

With --params both engines run the same work under the same rule: stream s runs
the file's list for stream s (the spec's order for stream s+1, each query with the
parameters drawn once by Maestro), issuing the next query until --duration
seconds are up (no minimum round; the list starts over if it runs out), and only
queries completed within the window count: queries/h = completed · 3600 / window,
latencies over the completed ones; a query still running at the deadline is
waited for and reported as `late`, not counted. --threads is DuckDB's thread
count; give Maestro the same number with --contexts.

Without --params (the old rule, kept for the README's older tables): each stream
draws its own parameters and runs whole rounds of 22 until the time is up.

`refresh --sets DIR --pairs N` applies TPC-H's refresh functions as Maestro's `tpch
refresh` does, to the refresh sets Maestro wrote (`maestro tpch refresh --export-sets
DIR`): RF1 = one transaction inserting `orders.tbl.u<n>` and `lineitem.tbl.u<n>`, RF2 =
one transaction deleting the orders of `delete.<n>` and their line items; each timed
from BEGIN (before reading the files) to COMMIT; prints JSON like `tpch refresh --json`.
"""

import argparse
import importlib.util
import json
import math
import os
import re
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
GENERATE = ROOT / "crates" / "tpch" / "answers" / "generate.py"


def load_generate():
    spec = importlib.util.spec_from_file_location("tpch_generate", GENERATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


G = load_generate()

# The spec's stream orders (Appendix A); must equal crates/tpch/src/queries/stream_order.rs.
STREAM_ORDERS_RS = ROOT / "crates" / "tpch" / "src" / "queries" / "stream_order.rs"


def stream_orders():
    text = STREAM_ORDERS_RS.read_text()
    body = text[text.index("STREAM_ORDERS: [[u8; 22]; 41] = ["):]
    body = body[body.index("= [") + 3:]
    body = body[:body.index("];")]
    numbers = [int(x) for x in re.findall(r"\d+", body)]
    rows = [numbers[i:i + 22] for i in range(0, len(numbers), 22)]
    if len(rows) != 41 or any(sorted(r) != list(range(1, 23)) for r in rows):
        sys.exit("duckdb_tpch.py: could not read 41 stream orders from %s" % STREAM_ORDERS_RS)
    return rows


def connect(sf, threads, data_dir):
    data = Path(data_dir or "/tmp/maestro-tpch-sf%s" % G.sf_label(sf))
    if not (data / "lineitem.tbl").exists():
        data.mkdir(parents=True, exist_ok=True)
        log("generating SF %s into %s" % (sf, data))
        G.generate_data(sf, data)
    start = time.perf_counter()
    con = G.load(data, sf)
    con.execute("set threads = %d" % threads)
    log("loaded in %.2f s, DuckDB %s, %d threads" % (time.perf_counter() - start,
                                                    G.duckdb.__version__, threads))
    return con, time.perf_counter() - start


def log(msg):
    sys.stderr.write("  " + msg + "\n")
    sys.stderr.flush()


def run_timed(con, q, params, view=None):
    sql = G.substitute(G.QUERIES[q], params)
    if view is not None:
        sql = sql.replace("revenue0", view)
    start = time.perf_counter()
    for stmt in G.statements(sql):
        cur = con.execute(stmt)
        if stmt.lower().startswith("select"):
            cur.fetchall()
    return time.perf_counter() - start


def single(args):
    con, load_s = connect(args.sf, args.threads, args.data_dir)
    results = []
    for q in range(1, 23):
        params = G.validation_params(q, args.sf)
        # The median with its spread, as `maestro bench tpch-single` reports
        # its own (best-of before 2026-11-27).
        samples = [run_timed(con, q, params) for _ in range(args.repetitions)]
        median = statistics.median(samples)
        log("Q%d: %.4f s median [%.4f–%.4f]" % (q, median, min(samples), max(samples)))
        results.append({"variant": "duckdb", "query": q, "metric": "seconds", "value": median,
                        "min": min(samples), "max": max(samples),
                        "reps": len(samples), "samples": samples})
    geo = math.exp(sum(math.log(r["value"]) for r in results) / len(results))
    print(json.dumps({
        "experiment": "tpch-single", "sf": args.sf, "contexts": args.threads,
        "granularity": "duckdb-%s" % G.duckdb.__version__, "repetitions": args.repetitions,
        "load_seconds": load_s, "results": results, "geomean_seconds": {"duckdb": geo},
    }))


def percentile(sorted_values, p):
    i = min(max(math.ceil(p * len(sorted_values)), 1), len(sorted_values))
    return sorted_values[i - 1]


def run_streams(n, stream, start, errors):
    """Runs stream(0..n) on n threads, joins them, exits on any error; returns the
    seconds since `start`."""
    threads = [threading.Thread(target=stream, args=(s,)) for s in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        sys.exit("duckdb_tpch.py: " + "; ".join(errors))
    return elapsed


def read_plan(path, sf, streams):
    """The parameter plan `maestro tpch params` writes: one list of
    {"query": n, "params": {...}} per stream."""
    try:
        plan = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        sys.exit("duckdb_tpch.py: --params %s: %s" % (path, e))
    if plan.get("format") != "maestro-tpch-params/1":
        sys.exit("duckdb_tpch.py: --params %s: not a maestro-tpch-params/1 file" % path)
    if plan["sf"] != sf:
        sys.exit("duckdb_tpch.py: --params %s is for SF %s, this run is at SF %s"
                 % (path, plan["sf"], sf))
    if max(streams) > len(plan["streams"]):
        sys.exit("duckdb_tpch.py: --params %s has %d stream(s), this run needs %d"
                 % (path, len(plan["streams"]), max(streams)))
    return plan


def fixed_window(n, duration, plan, open_stream, run_entry):
    """The fixed-window rule (see the module doc) over n streams: stream s runs
    `run_entry(handle, s, entry)` (returning its latency) over the plan's list for
    stream s, on `handle = open_stream(s)`, until `duration` seconds are up. Returns
    (the latencies completed within the window, sorted; late queries; elapsed s)."""
    done = []      # (latency, end time) of every completed query
    errors = []
    lock = threading.Lock()
    handles = [open_stream(s) for s in range(n)]
    start = time.perf_counter()
    deadline = start + duration

    def stream(s):
        entries = plan["streams"][s]
        i = 0
        while time.perf_counter() < deadline:
            e = entries[i % len(entries)]
            i += 1
            try:
                t = run_entry(handles[s], s, e)
            except Exception as ex:  # reported, never swallowed
                with lock:
                    errors.append("stream %d Q%d: %s" % (s, e["query"], ex))
                return
            with lock:
                done.append((t, time.perf_counter()))

    elapsed = run_streams(n, stream, start, errors)
    for h in handles:
        h.close()
    latencies = sorted(t for t, end in done if end <= deadline)
    return latencies, len(done) - len(latencies), elapsed


def throughput_window(args, con, load_s, plan, stream_counts):
    """The fixed-window rule (see the module doc)."""
    runs = []
    for n in stream_counts:
        latencies, late, elapsed = fixed_window(
            n, args.duration, plan, lambda s: con.cursor(),
            lambda cur, s, e: run_timed(cur, e["query"], e["params"], view="revenue_s%d" % s))
        if not latencies:
            sys.exit("duckdb_tpch.py: %d stream(s): no query completed within %s s"
                     % (n, args.duration))
        run = {"streams": n, "elapsed_s": elapsed, "window_s": args.duration,
               "queries": len(latencies), "late": late,
               "queries_per_hour": len(latencies) * 3600 / args.duration,
               "p50_s": percentile(latencies, 0.5), "p99_s": percentile(latencies, 0.99),
               "max_s": latencies[-1]}
        log("%d stream(s): %d queries in the %.1f s window (%d late), %.0f queries/h, "
            "p50 %.3f s, p99 %.3f s" % (n, run["queries"], args.duration, late,
                                        run["queries_per_hour"], run["p50_s"], run["p99_s"]))
        runs.append(run)
    return {"experiment": "tpch-throughput", "engine": "duckdb-%s" % G.duckdb.__version__,
            "sf": args.sf, "threads": args.threads, "seed": plan["seed"],
            "rule": "fixed-window", "params": str(args.params),
            "load_seconds": load_s, "runs": runs}


def throughput(args):
    stream_counts = [int(s) for s in args.streams.split(",")]
    plan = None
    if args.params:
        if not args.duration:
            sys.exit("duckdb_tpch.py: --params runs a fixed window: give --duration")
        plan = read_plan(args.params, args.sf, stream_counts)
    con, load_s = connect(args.sf, args.threads, args.data_dir)
    if plan is not None:
        report = throughput_window(args, con, load_s, plan, stream_counts)
        print_throughput(args, report)
        return
    orders = stream_orders()
    runs = []
    for n in stream_counts:
        latencies = []
        errors = []
        lock = threading.Lock()
        deadline = None

        def stream(s):
            cur = con.cursor()
            rnd = 0
            while True:
                for q in orders[(s + 1) % len(orders)]:
                    rng = G.Rng("duckdb-throughput/%d/s%d/r%d/q%d" % (args.seed, s, rnd, q))
                    params = G.random_params(q, rng, args.sf)
                    try:
                        t = run_timed(cur, q, params, view="revenue_s%d" % s)
                    except Exception as e:  # reported, never swallowed
                        with lock:
                            errors.append("stream %d Q%d: %s" % (s, q, e))
                        return
                    with lock:
                        latencies.append(t)
                rnd += 1
                if deadline is None or time.perf_counter() >= deadline:
                    return

        start = time.perf_counter()
        if args.duration:
            deadline = start + args.duration
        elapsed = run_streams(n, stream, start, errors)
        latencies.sort()
        run = {"streams": n, "elapsed_s": elapsed, "queries": len(latencies),
               "queries_per_hour": len(latencies) * 3600 / elapsed,
               "p50_s": percentile(latencies, 0.5), "p99_s": percentile(latencies, 0.99),
               "max_s": latencies[-1]}
        log("%d stream(s): %.0f queries/h, p50 %.3f s, p99 %.3f s"
            % (n, run["queries_per_hour"], run["p50_s"], run["p99_s"]))
        runs.append(run)
    report = {"experiment": "tpch-throughput", "engine": "duckdb-%s" % G.duckdb.__version__,
              "sf": args.sf, "threads": args.threads, "seed": args.seed,
              "rule": "whole-rounds", "load_seconds": load_s, "runs": runs}
    print_throughput(args, report)


def print_throughput(args, report):
    runs = report["runs"]
    if args.json:
        print(json.dumps(report))
    else:
        print("%7s %8s %9s %10s %9s %9s %9s" % ("streams", "queries", "elapsed s", "queries/h",
                                               "p50 s", "p99 s", "max s"))
        for r in runs:
            print("%7d %8d %9.2f %10.0f %9.4f %9.4f %9.4f" % (
                r["streams"], r["queries"], r["elapsed_s"], r["queries_per_hour"], r["p50_s"],
                r["p99_s"], r["max_s"]))


def rf1(con, sets, n):
    """RF1 of set n from the files of `maestro tpch refresh --export-sets`, one
    transaction (reading the files inside it, as the spec's RF1 loads its rows)."""
    con.execute("begin")
    for table in ("orders", "lineitem"):
        cols = G.SCHEMA[table]
        read = ", ".join("'%s': '%s'" % (c, t) for c, t in cols) + ", '_end': 'VARCHAR'"
        con.execute(
            "insert into %s select %s from read_csv('%s', delim='|', header=false, "
            "quote='', escape='', auto_detect=false, columns={%s})"
            % (table, ", ".join(c for c, _ in cols), Path(sets) / ("%s.tbl.u%d" % (table, n)), read))
    con.execute("commit")


def rf2(con, sets, n):
    """RF2 of set n: the orders of `delete.<n>` and their line items, one transaction."""
    keys = [int(line.split("|")[0]) for line in open(Path(sets) / ("delete.%d" % n))]
    con.execute("begin")
    con.execute("create or replace temp table doomed as select unnest(?) as k", [keys])
    con.execute("delete from lineitem where l_orderkey in (select k from doomed)")
    con.execute("delete from orders where o_orderkey in (select k from doomed)")
    con.execute("commit")


def refresh(args):
    con, load_s = connect(args.sf, args.threads, args.data_dir)
    out = []
    for n in range(1, args.pairs + 1):
        for name, function in (("RF1", rf1), ("RF2", rf2)):
            start = time.perf_counter()
            function(con, args.sets, n)
            out.append({"function": name, "set": n, "total_s": time.perf_counter() - start})
        log("pair %d: RF1 %.1f ms, RF2 %.1f ms" % (n, out[-2]["total_s"] * 1e3,
                                                   out[-1]["total_s"] * 1e3))
    print(json.dumps({"experiment": "tpch-refresh", "engine": "duckdb " + G.duckdb.__version__,
                      "sf": args.sf, "threads": args.threads, "load_seconds": load_s,
                      "refreshes": out}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    for name in ("single", "throughput", "refresh"):
        p = sub.add_parser(name)
        p.add_argument("--sf", type=float, default=1.0)
        p.add_argument("--threads", type=int, default=os.cpu_count())
        p.add_argument("--data-dir")
        if name == "single":
            p.add_argument("--repetitions", type=int, default=3)
        elif name == "refresh":
            p.add_argument("--sets", required=True,
                           help="directory of `maestro tpch refresh --export-sets`")
            p.add_argument("--pairs", type=int, default=1)
        else:
            p.add_argument("--streams", default="1,4,16")
            p.add_argument("--duration", type=float)
            p.add_argument("--seed", type=int, default=1)
            p.add_argument("--params", help="parameter plan from `maestro tpch params` "
                                            "(fixed-window rule; needs --duration)")
            p.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.sf <= 0 or args.threads < 1:
        ap.error("--sf must be positive and --threads at least 1")
    {"single": single, "throughput": throughput, "refresh": refresh}[args.mode](args)


if __name__ == "__main__":
    main()
