#!/usr/bin/env bash
# TPC-H side by side with DuckDB on the same machine, same data generator, same
# queries, in one session: the numbers in the README.
#
#   bash crates/bench/scripts/tpch_vs_duckdb.sh [SF] [CONTEXTS] [DURATION_S] [OUT_DIR] [REPS] [SEED]
#
# Like for like, on both sides:
# - the same work: the parameter sets are generated once, from one seed
#   (`maestro tpch params`, $OUT/params.json), and fed to both engines; stream s
#   runs the same queries in the same order (the spec's order for stream s+1)
#   with the same parameters on both;
# - the same duration and stop rule: a fixed window of DURATION_S seconds per
#   stream count; streams issue queries until the deadline, and only queries
#   completed within the window count (queries/h = completed · 3600 / window;
#   a query still running at the deadline is waited for and reported as `late`);
# - the same thread count: DuckDB `--threads CONTEXTS`, Maestro `--contexts CONTEXTS`;
# - interleaved runs: Maestro, DuckDB, Maestro, DuckDB, … REPS times each (each
#   run loads its own copy of the data; loading is outside the window).
# Single-stream latency (validation parameters, best of 3 per query) runs once
# per engine before the throughput runs.
#
# Needs: pip install duckdb tpchgen-cli (the script stops if they are missing).
set -euo pipefail
SF=${1:-1}
CONTEXTS=${2:-$(nproc)}
DURATION=${3:-20}
OUT=${4:-target/bench/tpch-sf$SF}
REPS=${5:-3}
SEED=${6:-7}
STREAMS=${STREAMS:-1,4,16}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
cargo build --release -q -p maestro-cli
M=target/release/maestro

if [ "${SKIP_SINGLE:-0}" != 1 ]; then
  echo "== single stream: DuckDB, then Maestro (static, hint) beside it" >&2
  python3 "$HERE/duckdb_tpch.py" single --sf "$SF" --threads "$CONTEXTS" > "$OUT/duckdb-single.json"
  for g in static hint; do
    "$M" bench tpch-single --sf "$SF" --contexts "$CONTEXTS" --granularity "$g" \
      --duckdb "$OUT/duckdb-single.json" --out "$OUT/single-$g" > /dev/null
    cat "$OUT/single-$g/tpch-single.txt"
  done
fi

MAX_STREAMS=$(tr ',' '\n' <<<"$STREAMS" | sort -n | tail -1)
"$M" tpch params --sf "$SF" --seed "$SEED" --streams "$MAX_STREAMS" --out "$OUT/params.json"

echo "== throughput: streams $STREAMS, ${DURATION} s window each, $REPS interleaved repetitions" >&2
for rep in $(seq 1 "$REPS"); do
  echo "-- repetition $rep: Maestro" >&2
  "$M" tpch throughput --sf "$SF" --contexts "$CONTEXTS" --streams "$STREAMS" \
    --granularity static,hint --params "$OUT/params.json" --duration "$DURATION" \
    --reps 1 --json > "$OUT/maestro-throughput-$rep.json"
  echo "-- repetition $rep: DuckDB" >&2
  python3 "$HERE/duckdb_tpch.py" throughput --sf "$SF" --threads "$CONTEXTS" --streams "$STREAMS" \
    --params "$OUT/params.json" --duration "$DURATION" --json > "$OUT/duckdb-throughput-$rep.json"
done

python3 - "$OUT" "$REPS" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
rows = {}
for rep in range(1, reps + 1):
    m = json.load(open("%s/maestro-throughput-%d.json" % (out, rep)))
    d = json.load(open("%s/duckdb-throughput-%d.json" % (out, rep)))
    for r in m["runs"]:
        rows.setdefault(("maestro-" + r["granularity"], r["streams"]), []).append(r)
    for r in d["runs"]:
        rows.setdefault((d["engine"], r["streams"]), []).append(r)
summary = []
print("%-22s %7s %12s %12s %12s %9s %9s %5s" % ("engine", "streams", "queries/h", "min", "max",
                                               "p50 s", "p99 s", "late"))
for (engine, streams), rs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    qph = [r["queries_per_hour"] for r in rs]
    p50 = statistics.median(r["latency"]["p50_s"] if "latency" in r else r["p50_s"] for r in rs)
    p99 = statistics.median(r["latency"]["p99_s"] if "latency" in r else r["p99_s"] for r in rs)
    late = sum(r.get("late", 0) for r in rs)
    print("%-22s %7d %12.0f %12.0f %12.0f %9.4f %9.4f %5d" % (
        engine, streams, statistics.median(qph), min(qph), max(qph), p50, p99, late))
    summary.append({"engine": engine, "streams": streams, "value": statistics.median(qph),
                    "min": min(qph), "max": max(qph), "reps": len(qph), "metric": "queries_per_hour",
                    "p50_s": p50, "p99_s": p99, "late": late})
json.dump({"experiment": "tpch-vs-duckdb-throughput", "rule": "fixed-window",
           "results": summary}, open("%s/throughput-summary.json" % out, "w"), indent=1)
PY
