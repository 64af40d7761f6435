#!/usr/bin/env bash
# TPC-H single stream beside DuckDB, in rounds with the engines' order
# alternating: the per-query latency table of the README.
#
#   bash crates/bench/scripts/tpch_single_vs_duckdb.sh [SF] [CONTEXTS] [ROUNDS] [REPS] [OUT_DIR]
#
# Each round runs, in a fresh process each (loads outside the timings):
# - DuckDB: the spec's SQL with the validation parameters, REPS runs per query
#   (`duckdb_tpch.py single`, median and spread), `threads = CONTEXTS`;
# - Maestro: `bench tpch-single --sql`: per query the hand-written plan on the
#   loaded tables and the same SQL text on the SQL store's main + delta
#   (`maestro serve`'s storage), REPS runs each, the two alternating.
# Odd rounds run DuckDB first, even rounds Maestro first. Writes
# duckdb-<r>.json, maestro-<r>.json and summary.json: per query each variant's
# median over the rounds' medians, and the per-round ratios ours ÷ DuckDB,
# median [min–max]; the same for the geometric means.
#
# Needs: pip install duckdb tpchgen-cli.
set -euo pipefail
SF=${1:-1}
CONTEXTS=${2:-$(nproc)}
ROUNDS=${3:-3}
REPS=${4:-5}
OUT=${5:-target/bench/tpch-single-sf$SF}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
M=${MAESTRO:-target/release/maestro}
[ -n "${MAESTRO:-}" ] || cargo build --release -q -p maestro-cli

duckdb_round() {
  python3 "$HERE/duckdb_tpch.py" single --sf "$SF" --threads "$CONTEXTS" \
    --repetitions "$REPS" > "$OUT/duckdb-$1.json"
}
maestro_round() {
  "$M" bench tpch-single --sf "$SF" --contexts "$CONTEXTS" --reps "$REPS" --sql \
    --json > "$OUT/maestro-$1.json"
}
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then duckdb_round "$r"; maestro_round "$r"
  else maestro_round "$r"; duckdb_round "$r"; fi
  echo "round $r of $ROUNDS done" >&2
done

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, math, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
times = {}  # (variant, query) -> per-round medians
for r in range(1, rounds + 1):
    for engine in ("maestro", "duckdb"):
        for x in json.load(open("%s/%s-%d.json" % (out, engine, r)))["results"]:
            times.setdefault((x["variant"], x["query"]), []).append(x["value"])
variants = sorted({v for v, _ in times}, key=lambda v: (v == "duckdb", v == "sql", v))
ours = [v for v in variants if v != "duckdb"]
def spread(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}
queries, geo = [], {}
for q in range(1, 23):
    row = {"query": q}
    for v in variants:
        row[v] = spread(times[(v, q)])
    for v in ours:
        row["%s_over_duckdb" % v] = spread([a / b for a, b in zip(times[(v, q)], times[("duckdb", q)])])
    queries.append(row)
for v in variants:
    geo[v] = [math.exp(sum(math.log(times[(v, q)][r]) for q in range(1, 23)) / 22)
              for r in range(rounds)]
summary = {"experiment": "tpch-single-vs-duckdb", "rounds": rounds, "queries": queries,
           "geomean_seconds": {v: spread(g) for v, g in geo.items()},
           "geomean_over_duckdb": {v: spread([a / b for a, b in zip(geo[v], geo["duckdb"])])
                                   for v in ours}}
json.dump(summary, open("%s/summary.json" % out, "w"), indent=1)
print("%5s" % "query" + "".join(" %12s" % v for v in variants)
      + "".join(" %18s" % ("%s ÷ duckdb" % v) for v in ours))
for row in queries:
    print("%5s" % ("Q%d" % row["query"])
          + "".join(" %12.4f" % row[v]["median"] for v in variants)
          + "".join(" %5.2f [%4.2f–%4.2f]" % tuple(row["%s_over_duckdb" % v][k]
                                                   for k in ("median", "min", "max"))
                    for v in ours))
print("%5s" % "geo" + "".join(" %12.4f" % summary["geomean_seconds"][v]["median"] for v in variants)
      + "".join(" %5.2f [%4.2f–%4.2f]" % tuple(summary["geomean_over_duckdb"][v][k]
                                               for k in ("median", "min", "max"))
                for v in ours))
PY
