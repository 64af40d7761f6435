#!/usr/bin/env bash
# Resident memory of `maestro serve` under TPC-H's refresh functions: the
# deltas of ORDERS and LINEITEM grow, background merges replace their mains,
# and the replaced mains are freed once no snapshot reads them.
#
#   bash crates/bench/scripts/serve_refresh_memory.sh MAESTRO OUT_PREFIX PAIRS [SF] [PORT]
#
# Starts MAESTRO serve, loads TPC-H at SF (default 1), generates the refresh
# sets 1..PAIRS ahead (`CALL maestro.tpch_refresh_sets`), samples the
# server's VmRSS every 0.5 s into OUT_PREFIX.csv, runs PAIRS RF1/RF2 pairs
# one after another through psql, waits 5 s (background merges finish),
# stops the server and writes OUT_PREFIX.json: resident MiB after the load,
# at the peak and at the end, and the wall time of the pairs.
set -euo pipefail
M=$1 OUT=$2 PAIRS=$3 SF=${4:-1} PORT=${5:-55450}
HERE=$(cd "$(dirname "$0")" && pwd)
PSQL=(psql -h 127.0.0.1 -p "$PORT" -U maestro -d maestro -X -q -v ON_ERROR_STOP=1)
"$M" serve --port "$PORT" > "$OUT.serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do "${PSQL[@]}" -c "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
"${PSQL[@]}" -c "CALL maestro.load_tpch($SF)" >/dev/null
"${PSQL[@]}" -c "CALL maestro.tpch_refresh_sets(1, $PAIRS)" >/dev/null
loaded=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
bash "$HERE/sample_rss.sh" "$pid" "$OUT.csv" 0.5 &
start=$(date +%s.%N)
for n in $(seq 1 "$PAIRS"); do
  "${PSQL[@]}" -c "CALL maestro.tpch_rf1($n)" -c "CALL maestro.tpch_rf2($n)" >/dev/null
done
end=$(date +%s.%N)
sleep 5
final=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
kill "$pid"; wait "$pid" 2>/dev/null || true
python3 - "$OUT" "$loaded" "$final" "$start" "$end" "$PAIRS" <<'PY'
import csv, json, sys
out, loaded, final, start, end, pairs = sys.argv[1:]
rss = [int(r["rss_bytes"]) for r in csv.DictReader(open(out + ".csv"))]
mib = lambda b: round(b / 2**20, 1)
report = {"pairs": int(pairs), "loaded_mib": mib(int(loaded) * 1024),
          "peak_mib": mib(max(rss + [int(final) * 1024])), "final_mib": mib(int(final) * 1024),
          "pairs_seconds": round(float(end) - float(start), 2)}
json.dump(report, open(out + ".json", "w"))
print(json.dumps(report))
PY
