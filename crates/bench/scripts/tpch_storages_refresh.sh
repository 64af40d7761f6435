#!/usr/bin/env bash
# TPC-H throughput with the spec's refresh stream on each storage, rotated:
#
#   bash crates/bench/scripts/tpch_storages_refresh.sh [SF] [STREAMS] [ROUNDS] [OUT_DIR]
#
# Variants (each a fresh process and load, `maestro tpch throughput --sf SF
# --streams STREAMS --reps 1 --refresh --json` plus its flags):
#   cow          the hand-written plans on copy-on-write versions (SharedDatabase)
#   store-plans  --storage delta --queries plans: the same plans on the SQL
#                store's tables, refreshes into the deltas, merged after each
#   store-sql    --storage delta --queries sql: each query's SQL text there
#   store-plans-norefresh  store-plans without --refresh (the baseline of
#                the refresh stream's cost on the store)
# The variant order rotates by one per round. Writes <variant>-<round>.json
# and summary.json: queries/h per round and median, each variant's ratio to
# cow per round (median, min, max), RF1/RF2 transaction times.
set -euo pipefail
SF=${1:-1}
STREAMS=${2:-2}
ROUNDS=${3:-3}
OUT=${4:-target/bench/tpch-storages-refresh-sf$SF}
mkdir -p "$OUT"
M=${MAESTRO:-target/release/maestro}
[ -n "${MAESTRO:-}" ] || cargo build --release -q -p maestro-cli
VARIANTS=(cow store-plans store-sql store-plans-norefresh)
flags_of() {
  case "$1" in
    cow) echo "--refresh --storage cow" ;;
    store-plans) echo "--refresh --storage delta --queries plans" ;;
    store-sql) echo "--refresh --storage delta --queries sql" ;;
    store-plans-norefresh) echo "--storage delta --queries plans" ;;
  esac
}
n=${#VARIANTS[@]}
for r in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((n - 1))); do
    v=${VARIANTS[$(((k + r - 1) % n))]}
    read -r -a F <<<"$(flags_of "$v")"
    "$M" tpch throughput --sf "$SF" --streams "$STREAMS" --reps 1 "${F[@]}" --json > "$OUT/$v-$r.json"
    echo "round $r: $v done" >&2
  done
done
python3 - "$OUT" "$ROUNDS" "${VARIANTS[@]}" <<'PY'
import json, statistics, sys
out, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
summary = {"experiment": "tpch-storages-refresh", "rounds": rounds, "variants": {}}
for v in variants:
    runs = [json.load(open("%s/%s-%d.json" % (out, v, r)))["runs"][0] for r in range(1, rounds + 1)]
    q = [x["queries_per_hour"] for x in runs]
    row = {"queries_per_hour": q, "median": statistics.median(q),
           "elapsed_s": [x["elapsed_s"] for x in runs]}
    if runs[0].get("refresh"):
        rf1 = [t for x in runs for t in x["refresh"]["rf1_s"]]
        rf2 = [t for x in runs for t in x["refresh"]["rf2_s"]]
        row["rf1_median_s"], row["rf2_median_s"] = statistics.median(rf1), statistics.median(rf2)
    summary["variants"][v] = row
base = summary["variants"]["cow"]["queries_per_hour"]
for v in variants:
    ratios = [a / b for a, b in zip(summary["variants"][v]["queries_per_hour"], base)]
    summary["variants"][v]["over_cow"] = {"per_round": ratios, "median": statistics.median(ratios),
                                          "min": min(ratios), "max": max(ratios)}
json.dump(summary, open("%s/summary.json" % out, "w"), indent=1)
for v in variants:
    row = summary["variants"][v]
    print("%-24s %9.0f q/h  ÷ cow %.2f [%.2f–%.2f]  RF1/RF2 %s" % (
        v, row["median"], row["over_cow"]["median"], row["over_cow"]["min"], row["over_cow"]["max"],
        "%.3f / %.3f s" % (row["rf1_median_s"], row["rf2_median_s"]) if "rf1_median_s" in row else "–"))
PY
