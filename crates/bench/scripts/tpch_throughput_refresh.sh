#!/usr/bin/env bash
# TPC-H throughput with and without the spec's refresh stream, interleaved:
#
#   bash crates/bench/scripts/tpch_throughput_refresh.sh [SF] [STREAMS] [ROUNDS] [OUT_DIR]
#
# ROUNDS rounds of `maestro tpch throughput --sf SF --streams STREAMS --reps 1`
# without and with `--refresh` (the order alternating per round; each a fresh
# process and load). With --refresh, STREAMS RF1/RF2 pairs run beside the
# query streams as transactions (their rows generated before the run, as
# dbgen's update files are), every query reads the snapshot current at its
# start, and the run ends when the queries and the refresh stream have.
# MAESTRO_THROUGHPUT_FLAGS adds flags to both variants (e.g. "--queries sql":
# SQL text on the SQL store's main + delta, the refresh stream into the deltas).
# Writes without-<r>.json, with-<r>.json and summary.json (queries/h per round,
# their medians, the per-round ratio with ÷ without, RF times).
set -euo pipefail
SF=${1:-1}
STREAMS=${2:-2}
ROUNDS=${3:-3}
OUT=${4:-target/bench/tpch-throughput-refresh-sf$SF}
mkdir -p "$OUT"
M=${MAESTRO:-target/release/maestro}
read -r -a EXTRA <<<"${MAESTRO_THROUGHPUT_FLAGS:-}"
[ -n "${MAESTRO:-}" ] || cargo build --release -q -p maestro-cli
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="without with"; else order="with without"; fi
  for v in $order; do
    flag=(); [ "$v" = with ] && flag=(--refresh)
    "$M" tpch throughput --sf "$SF" --streams "$STREAMS" --reps 1 "${EXTRA[@]}" "${flag[@]}" --json > "$OUT/$v-$r.json"
  done
  echo "round $r done" >&2
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
summary = {"experiment": "tpch-throughput-refresh", "rounds": rounds, "variants": {},
           "flags": os.environ.get("MAESTRO_THROUGHPUT_FLAGS", "")}
for v in ("without", "with"):
    runs = [json.load(open("%s/%s-%d.json" % (out, v, r)))["runs"][0] for r in range(1, rounds + 1)]
    q = [x["queries_per_hour"] for x in runs]
    row = {"queries_per_hour": q, "median": statistics.median(q),
           "elapsed_s": [x["elapsed_s"] for x in runs]}
    if v == "with":
        rf1 = [t for x in runs for t in x["refresh"]["rf1_s"]]
        rf2 = [t for x in runs for t in x["refresh"]["rf2_s"]]
        row["rf1_median_s"], row["rf2_median_s"] = statistics.median(rf1), statistics.median(rf2)
        row["rf1_s"], row["rf2_s"] = rf1, rf2
    summary["variants"][v] = row
ratios = [a / b for a, b in zip(summary["variants"]["with"]["queries_per_hour"],
                                summary["variants"]["without"]["queries_per_hour"])]
summary["with_over_without"] = {"per_round": ratios, "median": statistics.median(ratios),
                                "min": min(ratios), "max": max(ratios)}
json.dump(summary, open("%s/summary.json" % out, "w"), indent=1)
print(json.dumps(summary, indent=1))
PY
