#!/usr/bin/env bash
# TPC-C under concurrency controls side by side — by default strict 2PL on
# row tables and snapshot isolation on versioned tables (`--cc mvcc`); CCS
# names others, the first the baseline of the ratios (CCS="mvcc sql": the
# SQL store against the versioned rows) — for each
# execution variant and terminal count, REPS repetitions with the order of the
# two rotated per repetition, the same warehouses, duration and seed for every
# run. Each run's JSON goes to OUT/raw/; the summary (median and min–max of
# tx/s, of each ÷ the baseline within a repetition, of retried aborts per
# completed transaction) to OUT/summary.json and stdout.
#
# usage: tpcc_cc.sh [OUT=target/bench/tpcc-cc] [TERMINALS="1 4 16"] [REPS=3]
#                   [DURATION=5] [WAREHOUSES=1] [VARIANTS="single-pool receivers"]
#                   [CONTEXTS=2] [MAESTRO=target/release/maestro]
#                   [CCS="2pl mvcc"]
set -euo pipefail
out=${1:-target/bench/tpcc-cc}
terminals=${2:-"1 4 16"}
reps=${3:-3}
duration=${4:-5}
warehouses=${5:-1}
variants=${6:-"single-pool receivers"}
contexts=${7:-2}
maestro=${MAESTRO:-target/release/maestro}
read -r -a ccs <<< "${CCS:-2pl mvcc}"
mkdir -p "$out/raw"

for v in $variants; do
  for t in $terminals; do
    for ((rep = 0; rep < reps; rep++)); do
      for ((k = 0; k < ${#ccs[@]}; k++)); do
        cc=${ccs[$(((k + rep) % ${#ccs[@]}))]}
        f="$out/raw/$v-t$t-$cc-rep$rep.json"
        echo "$v, terminals $t, rep $((rep + 1))/$reps: $cc" >&2
        "$maestro" tpcc run --cc "$cc" --variant "$v" --warehouses "$warehouses" \
          --terminals "$t" --duration "$duration" --contexts "$contexts" --seed 1 --json \
          2>/dev/null > "$f"
      done
    done
  done
done

python3 - "$out" "$reps" "$terminals" "$variants" "$warehouses" "$duration" "${ccs[*]}" <<'PY'
import json, sys, statistics
out, reps, terminals, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
warehouses, duration = int(sys.argv[5]), float(sys.argv[6])
ccs = sys.argv[7].split()
base = ccs[0]
def metric(d, name):
    return next(r["value"] for r in d["results"] if r["metric"] == name)
def retries(d):
    name = "deadlock_aborts" if d["cc"] == "2pl" else "conflict_retries"
    return metric(d, name)
rows = []
for v in variants:
    for t in terminals:
        runs = {(cc, r): json.load(open(f"{out}/raw/{v}-t{t}-{cc}-rep{r}.json"))
                for cc in ccs for r in range(reps)}
        for cc in ccs:
            tps = [metric(runs[(cc, r)], "transactions_per_second") for r in range(reps)]
            ratio = [tps[r] / metric(runs[(base, r)], "transactions_per_second") for r in range(reps)]
            per_txn = [retries(runs[(cc, r)]) / max(1.0, metric(runs[(cc, r)], "committed"))
                       for r in range(reps)]
            rows.append({
                "variant": v, "cc": cc, "terminals": int(t), "metric": "transactions_per_second",
                "value": statistics.median(tps), "min": min(tps), "max": max(tps), "reps": reps,
                "samples": tps,
                "baseline": base,
                "ratio": statistics.median(ratio),
                "ratio_min": min(ratio), "ratio_max": max(ratio),
                "retries_per_commit": statistics.median(per_txn),
            })
summary = {"experiment": "tpcc-cc", "warehouses": warehouses, "seconds": duration,
           "reps": reps, "results": rows}
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
print(f"{'variant':<12} {'T':>3} {'cc':<5} {'tx/s (median)':>14} {'min–max':>20} {'÷ ' + base:>6} {'ratio min–max':>14} {'retries/commit':>15}")
for r in rows:
    print(f"{r['variant']:<12} {r['terminals']:>3} {r['cc']:<5} {r['value']:>14.0f} {r['min']:>9.0f}–{r['max']:<10.0f} "
          f"{r['ratio']:>6.2f} {r['ratio_min']:>6.2f}–{r['ratio_max']:<6.2f} {r['retries_per_commit']:>15.3f}")
PY
