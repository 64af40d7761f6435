#!/bin/bash
P=/work/main/docs/results/2026-11-25/tpch-duckdb/params.json
for rep in 1 2; do
  if [ $rep = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    if [ $b = old ]; then bin=/work/wt-old/target/release/maestro; else bin=/tmp/ab/maestro-new2; fi
    $bin tpch throughput --sf 1 --contexts 2 --streams 1,4,16 --granularity hint --params $P --duration 20 --reps 1 --json > /tmp/tab/$b-$rep.json 2>/dev/null
  done
done
echo done > /tmp/tab/finished
