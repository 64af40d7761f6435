#!/bin/bash
# A/B of the LIKE change: hand-written plans, 3 rounds, binaries alternating.
out=$1; mkdir -p $out
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="nolike memmem"; else order="memmem nolike"; fi
  for v in $order; do
    /tmp/maestro-$v bench tpch-single --sf 1 --queries 2,9,13,14,16,20 --reps 5 --json > $out/$v-$r.json 2>/dev/null
  done
done
