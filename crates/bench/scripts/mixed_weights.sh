#!/usr/bin/env bash
# The mixed workload's CPU split as a policy knob: for each transactional
# class weight W (queries' class weight 1), one `bench mixed` run with
# multiple-pools, single-hints and single-classes at W side by side (variant
# order rotated per repetition inside maestro), then a table of each
# variant's queries/min and tpmC divided by multiple-pools' of the same
# repetition (median [min–max] over the repetitions). multiple-pools is
# measured again beside every weight. Each run's JSON goes to OUT/w<W>/;
# the summary to OUT/summary.json and stdout.
#
# usage: mixed_weights.sh [OUT=target/bench/mixed-weights] [WEIGHTS="1 2 3 4"]
#                         [CLIENTS=1,4,16] [REPS=3] [DURATION=5] [SF=0.1]
#                         [TERMINALS=4] [CONTEXTS=2] [MAESTRO=target/release/maestro]
set -euo pipefail
out=${1:-target/bench/mixed-weights}
weights=${2:-"1 2 3 4"}
clients=${3:-1,4,16}
reps=${4:-3}
duration=${5:-5}
sf=${6:-0.1}
terminals=${7:-4}
contexts=${8:-2}
maestro=${MAESTRO:-target/release/maestro}
mkdir -p "$out"

for w in $weights; do
  echo "single-classes weight $w:1" >&2
  "$maestro" bench mixed --contexts "$contexts" --variants multiple-pools,single-hints,single-classes \
    --oltp-weight "$w" --tpch-clients "$clients" --tpcc-terminals "$terminals" --reps "$reps" \
    --duration "$duration" --sf "$sf" --out "$out/w$w" 2>&1 >/dev/null | grep -E 'rep [0-9]+/' >&2 || true
  test -s "$out/w$w/mixed.json" || { echo "no JSON for weight $w" >&2; exit 1; }
done

python3 - "$out" "$weights" <<'EOF'
import json, statistics, sys
out, weights = sys.argv[1], sys.argv[2].split()
rows = []
for w in weights:
    d = json.load(open(f"{out}/w{w}/mixed.json"))
    by = {(r["variant"], r["tpch_clients"], r["metric"]): r for r in d["results"]}
    for clients in d["params"]["tpch_clients"]:
        for variant in ("single-hints", "single-classes"):
            row = {"oltp_weight": int(w), "tpch_clients": clients, "variant": variant}
            for metric, key in (("tpch_queries_per_minute", "qpm"), ("tpmC", "tpmc")):
                ours = by[(variant, clients, metric)]["samples"]
                peer = by[("multiple-pools", clients, metric)]["samples"]
                ratios = [a / b for a, b in zip(ours, peer)]
                row[f"{key}_ratio"] = statistics.median(ratios)
                row[f"{key}_ratio_min"], row[f"{key}_ratio_max"] = min(ratios), max(ratios)
                row[f"{key}"] = statistics.median(ours)
                row[f"{key}_multiple_pools"] = statistics.median(peer)
            rows.append(row)
json.dump({"experiment": "mixed-weights", "rows": rows}, open(f"{out}/summary.json", "w"), indent=1)
print("| weight W:1 | TPC-H clients | variant | q/min ÷ MP | tpmC ÷ MP | sum |")
print("|---|---|---|---|---|---|")
for r in rows:
    if r["variant"] == "single-hints" and r["oltp_weight"] != int(weights[0]):
        continue
    label = "–" if r["variant"] == "single-hints" else f'{r["oltp_weight"]}:1'
    print(f'| {label} | {r["tpch_clients"]} | {r["variant"]} | '
          f'{r["qpm_ratio"]:.2f} [{r["qpm_ratio_min"]:.2f}–{r["qpm_ratio_max"]:.2f}] | '
          f'{r["tpmc_ratio"]:.2f} [{r["tpmc_ratio_min"]:.2f}–{r["tpmc_ratio_max"]:.2f}] | '
          f'{r["qpm_ratio"] + r["tpmc_ratio"]:.2f} |')
EOF
