#!/usr/bin/env bash
# TPC-C on a data directory with the three durabilities side by side — `off`
# (nothing logged), `group` (each sync first waits GROUP_DELAY_US for more
# commits), `sync` (a commit returns once its record is synced; one sync
# serves every commit waiting meanwhile) — for each execution variant and
# terminal count, REPS repetitions with the order of the three rotated per
# repetition. Every run starts from a fresh data directory of the same load
# (same seed) on the disk under OUT (not a tmpfs). Each run's JSON goes to
# OUT/raw/; the summary (median and min–max of tx/s, of each ÷ off within a
# repetition, of commit records per flush and New-Order latency) to
# OUT/summary.json and stdout.
#
# usage: tpcc_durability.sh [OUT=target/bench/tpcc-durability] [TERMINALS="4 16"]
#                           [REPS=3] [DURATION=5] [VARIANTS="single-pool single-pool-nosys"]
#                           [CONTEXTS=2] [GROUP_DELAY_US=200] [MAESTRO=target/release/maestro]
set -euo pipefail
out=${1:-target/bench/tpcc-durability}
terminals=${2:-"4 16"}
reps=${3:-3}
duration=${4:-5}
variants=${5:-"single-pool single-pool-nosys"}
contexts=${6:-2}
group_delay_us=${7:-200}
maestro=${MAESTRO:-target/release/maestro}
durabilities=(off group sync)
mkdir -p "$out/raw"
data="$out/data"

for v in $variants; do
  for t in $terminals; do
    for ((rep = 0; rep < reps; rep++)); do
      for ((k = 0; k < ${#durabilities[@]}; k++)); do
        d=${durabilities[$(((k + rep) % ${#durabilities[@]}))]}
        f="$out/raw/$v-t$t-$d-rep$rep.json"
        echo "$v, terminals $t, rep $((rep + 1))/$reps: $d" >&2
        rm -rf "$data"
        # The checkpoint interval is longer than the run: checkpoints are
        # measured on their own (their cost is not what this compares).
        "$maestro" tpcc run --data-dir "$data" --durability "$d" \
          --group-delay-us "$group_delay_us" --checkpoint-interval-s 3600 \
          --variant "$v" --warehouses 1 --terminals "$t" --duration "$duration" \
          --contexts "$contexts" --seed 1 --json 2>/dev/null > "$f"
      done
    done
  done
done
rm -rf "$data"

python3 - "$out" "$reps" "$terminals" "$variants" "$duration" "$group_delay_us" <<'PY'
import json, sys, statistics
out, reps, terminals, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
duration, delay = float(sys.argv[5]), float(sys.argv[6])
def metric(d, name, default=None):
    return next((r["value"] for r in d["results"] if r["metric"] == name), default)
rows = []
for v in variants:
    for t in terminals:
        runs = {(d, r): json.load(open(f"{out}/raw/{v}-t{t}-{d}-rep{r}.json"))
                for d in ("off", "group", "sync") for r in range(reps)}
        for d in ("off", "group", "sync"):
            tps = [metric(runs[(d, r)], "transactions_per_second") for r in range(reps)]
            ratio = [tps[r] / metric(runs[("off", r)], "transactions_per_second") for r in range(reps)]
            per_flush = [metric(runs[(d, r)], "log_records_per_flush", 0.0) for r in range(reps)]
            p50 = [metric(runs[(d, r)], "new_order_latency_p50_ms") for r in range(reps)]
            p99 = [metric(runs[(d, r)], "new_order_latency_p99_ms") for r in range(reps)]
            rows.append({
                "variant": v, "durability": d, "terminals": int(t),
                "metric": "transactions_per_second",
                "value": statistics.median(tps), "min": min(tps), "max": max(tps), "reps": reps,
                "samples": tps,
                "ratio_vs_off": statistics.median(ratio),
                "ratio_vs_off_min": min(ratio), "ratio_vs_off_max": max(ratio),
                "records_per_flush": statistics.median(per_flush),
                "new_order_p50_ms": statistics.median(p50),
                "new_order_p99_ms": statistics.median(p99),
            })
summary = {"experiment": "tpcc-durability", "warehouses": 1, "seconds": duration,
           "group_delay_us": delay, "reps": reps, "results": rows}
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
print(f"{'variant':<18} {'T':>3} {'durab.':<6} {'tx/s':>8} {'min–max':>16} {'÷ off':>6} {'min–max':>11} {'rec/flush':>9} {'NO p50 ms':>9} {'NO p99 ms':>9}")
for r in rows:
    print(f"{r['variant']:<18} {r['terminals']:>3} {r['durability']:<6} {r['value']:>8.0f} {r['min']:>7.0f}–{r['max']:<8.0f} "
          f"{r['ratio_vs_off']:>6.2f} {r['ratio_vs_off_min']:>5.2f}–{r['ratio_vs_off_max']:<5.2f} {r['records_per_flush']:>9.1f} "
          f"{r['new_order_p50_ms']:>9.3f} {r['new_order_p99_ms']:>9.3f}")
PY
