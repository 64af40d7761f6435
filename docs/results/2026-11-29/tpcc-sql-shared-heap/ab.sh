#!/usr/bin/env bash
# A/B of two maestro builds on TPC-C as SQL (`tpcc run --cc sql`): for each
# terminal count, REPS repetitions with the builds' order alternating; each
# run's JSON in OUT/raw/<build>-t<T>-rep<r>.json.
# usage: ab.sh OUT BEFORE AFTER [TERMINALS="1 4"] [REPS=3] [DURATION=5]
set -euo pipefail
out=$1; before=$2; after=$3; terminals=${4:-"1 4"}; reps=${5:-3}; duration=${6:-5}
mkdir -p "$out/raw"
for t in $terminals; do
  for ((rep = 0; rep < reps; rep++)); do
    builds=(before after)
    ((rep % 2)) && builds=(after before)
    for b in "${builds[@]}"; do
      bin=$before; [[ $b == after ]] && bin=$after
      echo "terminals $t, rep $((rep + 1))/$reps: $b" >&2
      "$bin" tpcc run --cc sql --variant single-pool --warehouses 1 --terminals "$t" \
        --duration "$duration" --contexts 2 --seed 1 --json 2>/dev/null > "$out/raw/$b-t$t-rep$rep.json"
    done
  done
done
