#!/usr/bin/env python3
"""CH-benCHmark's analytical engines side by side: `maestro ch run` with
`--olap-engine sql` (the SQL texts on the column mirror) and `plans` (the
hand-written plans over row versions), same data, same parameters, the
order of the two rotated in every repetition; one JSON file per run under
OUT, and a summary (median [min-max] of each engine and of the per-repetition
ratios sql / plans) printed and written as OUT/summary.txt.

    python3 crates/ch/scripts/olap_engines.py --maestro target/release/maestro \
        --clients 1,2 --reps 3 --out docs/results/DATE/ch-olap-engines
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ENGINES = ["sql", "plans"]
METRICS = ["tpmC", "queries_per_hour", "freshness_p50_ms"]


def run(args, engine, clients, rep):
    cmd = [
        args.maestro, "ch", "run",
        "--warehouses", str(args.warehouses),
        "--terminals", str(args.terminals),
        "--olap-clients", str(clients),
        "--duration", str(args.duration),
        "--contexts", str(args.contexts),
        "--variant", args.variant,
        "--olap-engine", engine,
        "--json",
    ]
    if args.max_tps:
        cmd += ["--max-tps", str(args.max_tps)]
    print(f"[rep {rep}] {engine}, {clients} client(s): {' '.join(cmd)}", file=sys.stderr)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    path = os.path.join(args.out, f"{engine}-c{clients}-r{rep}.json")
    with open(path, "w") as f:
        f.write(out)
    return {r["metric"]: r["value"] for r in report["results"]}


def spread(values):
    return f"{statistics.median(values):.3g} [{min(values):.3g}-{max(values):.3g}]"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--maestro", default="target/release/maestro")
    p.add_argument("--clients", default="1,2")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--warehouses", type=int, default=2)
    p.add_argument("--terminals", type=int, default=4)
    p.add_argument("--duration", type=float, default=10)
    p.add_argument("--contexts", type=int, default=2)
    p.add_argument("--variant", default="single-hints")
    p.add_argument("--max-tps", type=float, help="cap on TPC-C transactions per second")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if args.reps < 1:
        p.error("--reps must be at least 1")
    clients = [int(c) for c in args.clients.split(",")]
    os.makedirs(args.out, exist_ok=True)
    results = {}  # (clients, engine) -> [metrics per rep]
    for rep in range(1, args.reps + 1):
        for c in clients:
            order = ENGINES if rep % 2 else list(reversed(ENGINES))
            for engine in order:
                results.setdefault((c, engine), []).append(run(args, engine, c, rep))
    cap = f", at most {args.max_tps:g} transactions/s" if args.max_tps else ""
    lines = [f"ch run, W={args.warehouses}, {args.terminals} terminals{cap}, {args.duration} s, "
             f"{args.variant}, {args.contexts} contexts, {args.reps} reps (engines rotated)"]
    for c in clients:
        for m in METRICS:
            sql = [r[m] for r in results[(c, "sql")]]
            plans = [r[m] for r in results[(c, "plans")]]
            ratios = [s / q for s, q in zip(sql, plans) if q]
            lines.append(f"{c} client(s) {m}: sql {spread(sql)}, plans {spread(plans)}, "
                         f"sql/plans {spread(ratios) if ratios else 'n/a'}")
        for m in ["mirror_merges", "mirror_merge_seconds", "mirror_delta_seconds",
                  "delta_rows_per_query"]:
            lines.append(f"{c} client(s) sql {m}: {spread([r[m] for r in results[(c, 'sql')]])}")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
