#!/usr/bin/env bash
# TPC-H's refresh functions on Maestro (MVCC transactions on copy-on-write table
# versions) and on DuckDB, the same refresh sets, interleaved:
#
#   bash crates/bench/scripts/tpch_refresh_vs_duckdb.sh [SF] [PAIRS] [REPS] [OUT_DIR] [CONTEXTS]
#
# The sets are written once by Maestro (`tpch refresh --export-sets`); then REPS
# rounds of: Maestro (`tpch refresh --json`, fresh load, pairs 1..PAIRS), DuckDB
# (`duckdb_tpch.py refresh`, fresh load, the same pairs) — the order of the two
# alternating per round. Both time each function from its start to its commit,
# including producing the rows (Maestro generates them, DuckDB reads the files).
# Writes maestro-<r>.json, duckdb-<r>.json and summary.json (median per function
# over every set and round, with min–max, and the ratio Maestro ÷ DuckDB).
# MAESTRO_REFRESH_FLAGS adds flags to Maestro's runs (e.g. `--storage delta`: the
# refreshes write the SQL store's deltas instead of copy-on-write versions).
# Needs: pip install duckdb tpchgen-cli.
set -euo pipefail
SF=${1:-1}
PAIRS=${2:-4}
REPS=${3:-3}
OUT=${4:-target/bench/tpch-refresh-sf$SF}
CONTEXTS=${5:-$(nproc)}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
M=${MAESTRO:-target/release/maestro}
[ -n "${MAESTRO:-}" ] || cargo build --release -q -p maestro-cli
"$M" tpch refresh --sf "$SF" --pairs "$PAIRS" --export-sets "$OUT/sets"
for r in $(seq 1 "$REPS"); do
  # shellcheck disable=SC2086 # MAESTRO_REFRESH_FLAGS is a list of flags
  maestro() { "$M" tpch refresh --sf "$SF" --pairs "$PAIRS" --contexts "$CONTEXTS" ${MAESTRO_REFRESH_FLAGS:-} --json > "$OUT/maestro-$r.json"; }
  duckdb() { python3 "$HERE/duckdb_tpch.py" refresh --sf "$SF" --threads "$CONTEXTS" --sets "$OUT/sets" --pairs "$PAIRS" > "$OUT/duckdb-$r.json"; }
  if [ $((r % 2)) = 1 ]; then maestro; duckdb; else duckdb; maestro; fi
  echo "round $r done" >&2
done
python3 - "$OUT" "$REPS" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
summary = {"experiment": "tpch-refresh-vs-duckdb", "rounds": reps, "functions": {}}
for f in ("RF1", "RF2"):
    row = {}
    for engine in ("maestro", "duckdb"):
        times = []
        for r in range(1, reps + 1):
            data = json.load(open("%s/%s-%d.json" % (out, engine, r)))
            # Maestro's first RF1 of a process builds tpchgen's text pool: reported apart.
            rs = [x for x in data["refreshes"] if x["function"] == f]
            if engine == "maestro" and f == "RF1":
                first = rs[0]["total_s"] + rs[0].get("generate_s", 0.0)
                row["maestro_first_rf1_s"] = row.get("maestro_first_rf1_s", []) + [first]
                rs = rs[1:]
            # Maestro reports generating the rows apart (generate_s): add it, as
            # DuckDB's time includes reading them.
            times += [x["total_s"] + x.get("generate_s", 0.0) for x in rs]
        row[engine] = {"median_s": statistics.median(times), "min_s": min(times),
                       "max_s": max(times), "samples": len(times)}
    row["ratio_of_medians"] = row["maestro"]["median_s"] / row["duckdb"]["median_s"]
    summary["functions"][f] = row
json.dump(summary, open("%s/summary.json" % out, "w"), indent=1)
print(json.dumps(summary, indent=1))
PY
