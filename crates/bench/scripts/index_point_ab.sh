#!/usr/bin/env bash
# Two builds of the `index_point_query` example (crates/sql/examples) side by
# side: a point query and a range count on twin tables of ROWS rows, `t` with
# an index on the key and `u` without, over the main and again with a delta
# of DELTA appended rows and as many deletions.
#
#   bash crates/bench/scripts/index_point_ab.sh BEFORE AFTER OUT_DIR [ROUNDS] [ROWS] [DELTA] [REPS]
#
# BEFORE and AFTER are example binaries (cargo build --release -p maestro-sql
# --example index_point_query, at each commit). ROUNDS rounds, the order of
# the two alternating; each run a fresh process. Writes <variant>-<round>.json
# and summary.json: per variant and query the medians over the rounds of each
# run's median, and the per-round ratio after ÷ before of the indexed table.
set -euo pipefail
BEFORE=$1; AFTER=$2; OUT=$3
ROUNDS=${4:-3}; ROWS=${5:-10000000}; DELTA=${6:-150000}; REPS=${7:-21}
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="before after"; else order="after before"; fi
  for v in $order; do
    bin=$BEFORE; [ "$v" = after ] && bin=$AFTER
    "$bin" --rows "$ROWS" --delta-rows "$DELTA" --reps "$REPS" > "$OUT/$v-$r.json"
    echo "round $r: $v done" >&2
  done
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs = {v: [json.load(open("%s/%s-%d.json" % (out, v, r))) for r in range(1, rounds + 1)] for v in ("before", "after")}
summary = {"experiment": "index-point-ab", "rounds": rounds, "rows": runs["after"][0]["rows"],
           "delta_rows": runs["after"][0]["delta_rows"], "parts": {}}
for part in ("main", "main_plus_delta"):
    for k, q in enumerate(runs["after"][0][part]):
        row = {}
        for v in ("before", "after"):
            for tab in ("index", "scan"):
                row["%s_%s_ms" % (v, tab)] = statistics.median(x[part][k][tab]["median_ms"] for x in runs[v])
        ratios = [a[part][k]["index"]["median_ms"] / b[part][k]["index"]["median_ms"]
                  for a, b in zip(runs["after"], runs["before"])]
        row["after_over_before_index"] = {"per_round": ratios, "median": statistics.median(ratios),
                                          "min": min(ratios), "max": max(ratios)}
        summary["parts"]["%s: %s" % (part, q["sql"])] = row
json.dump(summary, open("%s/summary.json" % out, "w"), indent=1)
for name, row in summary["parts"].items():
    r = row["after_over_before_index"]
    print("%-70s index before %.3f ms, after %.3f ms (÷ %.2f [%.2f–%.2f]); scan %.1f ms" % (
        name, row["before_index_ms"], row["after_index_ms"], r["median"], r["min"], r["max"], row["after_scan_ms"]))
PY
