#!/usr/bin/env bash
# CH-benCHmark on shared data as analytical clients grow: `maestro ch run` with the
# same terminals, warehouses, duration and seed at each analytical-client count,
# REPS repetitions with the order of the counts rotated per repetition. Each run's
# JSON goes to OUT/raw/; the summary (median and min–max of tpmC, of analytical
# queries per hour and of the freshness; tpmC relative to the
# run without clients in the same repetition) to OUT/summary.json and stdout.
#
# usage: ch_clients.sh [OUT=target/bench/ch-clients] [CLIENTS="0 1 2 4"] [REPS=3]
#                      [DURATION=10] [WAREHOUSES=1] [TERMINALS=4] [VARIANT=single-pool]
#                      [MAESTRO=target/release/maestro]
set -euo pipefail
out=${1:-target/bench/ch-clients}
clients=(${2:-0 1 2 4})
reps=${3:-3}
duration=${4:-10}
warehouses=${5:-1}
terminals=${6:-4}
variant=${7:-single-pool}
maestro=${MAESTRO:-target/release/maestro}
mkdir -p "$out/raw"

for ((rep = 0; rep < reps; rep++)); do
  for ((k = 0; k < ${#clients[@]}; k++)); do
    c=${clients[$(((k + rep) % ${#clients[@]}))]}
    echo "rep $((rep + 1))/$reps: $c analytical clients" >&2
    "$maestro" ch run --warehouses "$warehouses" --terminals "$terminals" --olap-clients "$c" \
      --duration "$duration" --variant "$variant" --seed 1 --json 2>/dev/null > "$out/raw/c$c-rep$rep.json"
  done
done

python3 - "$out" "$reps" "${clients[*]}" "$warehouses" "$terminals" "$duration" "$variant" <<'PY'
import json, sys, statistics
out, reps, clients = sys.argv[1], int(sys.argv[2]), [int(c) for c in sys.argv[3].split()]
warehouses, terminals, duration, variant = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
def metric(d, name):
    return next(r["value"] for r in d["results"] if r["metric"] == name)
runs = {(c, r): json.load(open(f"{out}/raw/c{c}-rep{r}.json")) for c in clients for r in range(reps)}
base = min(clients)
rows = []
for c in clients:
    tpmc = [metric(runs[(c, r)], "tpmC") for r in range(reps)]
    qph = [metric(runs[(c, r)], "queries_per_hour") for r in range(reps)]
    rel = [tpmc[r] / metric(runs[(base, r)], "tpmC") for r in range(reps)]
    fresh = [metric(runs[(c, r)], "freshness_p50_ms") for r in range(reps)]
    rows.append({
        "variant": variant, "olap_clients": c, "metric": "tpmC",
        "value": statistics.median(tpmc), "min": min(tpmc), "max": max(tpmc), "reps": reps, "samples": tpmc,
        "tpmC_vs_no_clients": statistics.median(rel), "tpmC_vs_no_clients_min": min(rel),
        "tpmC_vs_no_clients_max": max(rel),
        "queries_per_hour": statistics.median(qph), "queries_per_hour_min": min(qph),
        "queries_per_hour_max": max(qph), "queries_per_hour_samples": qph,
        "freshness_p50_ms": statistics.median(fresh),
    })
summary = {"experiment": "ch-clients", "warehouses": warehouses, "terminals": terminals,
           "seconds": duration, "reps": reps, "results": rows}
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
print(f"{'clients':>7} {'tpmC (median)':>14} {'min–max':>22} {'÷ 0 clients':>11} {'queries/h':>10} {'min–max':>19} {'fresh p50 ms':>12}")
for r in rows:
    print(f"{r['olap_clients']:>7} {r['value']:>14.0f} {r['min']:>10.0f}–{r['max']:<11.0f} {r['tpmC_vs_no_clients']:>11.2f} "
          f"{r['queries_per_hour']:>10.0f} {r['queries_per_hour_min']:>9.0f}–{r['queries_per_hour_max']:<9.0f} {r['freshness_p50_ms']:>12.1f}")
PY
