#!/usr/bin/env bash
# TPC-C execution modes side by side: every scheduler preset and receivers
# (thread per terminal), at each terminal count, REPS repetitions with the mode
# order rotated per repetition (rep k starts at mode k), the same warehouses,
# duration and seed for every run. Each run's JSON goes to OUT/raw/; the summary
# (median and min–max of tx/s and of the ratio to receivers within the same
# repetition) to OUT/summary.json and stdout.
#
# usage: tpcc_modes.sh [OUT=target/bench/tpcc-modes] [TERMINALS="2 16"] [REPS=3]
#                      [DURATION=5] [WAREHOUSES=2] [CONTEXTS=2] [MAESTRO=target/release/maestro]
#
# MAESTRO may name another build (e.g. an older commit's binary) to compare
# before and after on the same machine in the same session.
set -euo pipefail
out=${1:-target/bench/tpcc-modes}
terminals=${2:-"2 16"}
reps=${3:-3}
duration=${4:-5}
warehouses=${5:-2}
contexts=${6:-2}
maestro=${MAESTRO:-target/release/maestro}
modes=(receivers single-pool single-pool-nosys single-hints)
mkdir -p "$out/raw"
# The flag was --scheduler before it became --variant; accept either build.
flag=--variant
"$maestro" tpcc run --help 2>&1 | grep -q -- '--variant' || flag=--scheduler

for t in $terminals; do
  for ((rep = 0; rep < reps; rep++)); do
    for ((k = 0; k < ${#modes[@]}; k++)); do
      m=${modes[$(((k + rep) % ${#modes[@]}))]}
      f="$out/raw/t$t-$m-rep$rep.json"
      echo "terminals $t, rep $((rep + 1))/$reps: $m" >&2
      "$maestro" tpcc run --warehouses "$warehouses" --terminals "$t" --duration "$duration" \
        "$flag" "$m" --contexts "$contexts" --seed 1 --json 2>/dev/null > "$f"
    done
  done
done

python3 - "$out" "$reps" "$terminals" <<'EOF'
import json, sys, statistics, glob, os
out, reps, terminals = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
modes = ["receivers", "single-pool", "single-pool-nosys", "single-hints"]
def metric(d, name):
    return next(r["value"] for r in d["results"] if r["metric"] == name)
rows = []
for t in terminals:
    runs = {(m, r): json.load(open(f"{out}/raw/t{t}-{m}-rep{r}.json")) for m in modes for r in range(reps)}
    for m in modes:
        tps = [metric(runs[(m, r)], "transactions_per_second") for r in range(reps)]
        ratio = [tps[r] / metric(runs[("receivers", r)], "transactions_per_second") for r in range(reps)]
        aborts = [metric(runs[(m, r)], "abort_rate") for r in range(reps)]
        deadlocks = [metric(runs[(m, r)], "deadlock_aborts") / max(1.0, metric(runs[(m, r)], "committed"))
                     for r in range(reps)]
        rows.append({
            "terminals": int(t), "variant": m, "metric": "transactions_per_second",
            "value": statistics.median(tps), "min": min(tps), "max": max(tps), "reps": reps,
            "samples": tps,
            "ratio_vs_receivers": statistics.median(ratio),
            "ratio_vs_receivers_min": min(ratio), "ratio_vs_receivers_max": max(ratio),
            "abort_rate": statistics.median(aborts),
            "deadlock_aborts_per_commit": statistics.median(deadlocks),
        })
summary = {"experiment": "tpcc-modes", "reps": reps, "results": rows}
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
print(f"{'T':>3} {'mode':<18} {'tx/s (median)':>14} {'min–max':>20} {'÷ receivers':>12} {'ratio min–max':>14} {'aborts':>7} {'deadlocks':>9}")
for r in rows:
    print(f"{r['terminals']:>3} {r['variant']:<18} {r['value']:>14.0f} {r['min']:>9.0f}–{r['max']:<10.0f} "
          f"{r['ratio_vs_receivers']:>12.2f} {r['ratio_vs_receivers_min']:>6.2f}–{r['ratio_vs_receivers_max']:<6.2f} {100*r['abort_rate']:>6.2f}% {100*r['deadlock_aborts_per_commit']:>8.2f}%")
EOF
