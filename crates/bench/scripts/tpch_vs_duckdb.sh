#!/usr/bin/env bash
# TPC-H side by side with DuckDB on the same machine, same data generator, same
# queries and parameters, in one session: the numbers in the README.
#
#   bash crates/bench/scripts/tpch_vs_duckdb.sh [SF] [CONTEXTS] [DURATION_S] [OUT_DIR]
#
# Needs: pip install duckdb tpchgen-cli (the script stops if they are missing).
set -euo pipefail
SF=${1:-1}
CONTEXTS=${2:-$(nproc)}
DURATION=${3:-20}
OUT=${4:-target/bench/tpch-sf$SF}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
cargo build --release -q -p maestro-cli
M=target/release/maestro

echo "== single stream: DuckDB, then Maestro (static, hint) beside it" >&2
python3 "$HERE/duckdb_tpch.py" single --sf "$SF" --threads "$CONTEXTS" > "$OUT/duckdb-single.json"
for g in static hint; do
  "$M" bench tpch-single --sf "$SF" --contexts "$CONTEXTS" --granularity "$g" \
    --duckdb "$OUT/duckdb-single.json" --out "$OUT/single-$g" > /dev/null
  cat "$OUT/single-$g/tpch-single.txt"
done

echo "== throughput: 1, 4, 16 streams for ${DURATION} s each" >&2
python3 "$HERE/duckdb_tpch.py" throughput --sf "$SF" --threads "$CONTEXTS" --streams 1,4,16 \
  --duration "$DURATION" --json > "$OUT/duckdb-throughput.json"
python3 - "$OUT/duckdb-throughput.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("duckdb %s, %d threads" % (r["engine"], r["threads"]))
print("%7s %8s %10s %9s %9s" % ("streams", "queries", "queries/h", "p50 s", "p99 s"))
for x in r["runs"]:
    print("%7d %8d %10.0f %9.4f %9.4f" % (x["streams"], x["queries"], x["queries_per_hour"], x["p50_s"], x["p99_s"]))
PY
"$M" tpch throughput --sf "$SF" --contexts "$CONTEXTS" --streams 1,4,16 --granularity static,hint \
  --duration "$DURATION" --out "$OUT/throughput" > /dev/null
cat "$OUT/throughput/tpch-throughput.txt"
