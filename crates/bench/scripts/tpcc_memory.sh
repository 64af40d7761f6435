#!/usr/bin/env bash
# Resident memory over a long TPC-C run: starts `maestro tpcc run ARGS --json`,
# samples its VmRSS every PERIOD seconds into OUT/rss.csv (seconds,rss_bytes), and
# keeps the run's JSON (OUT/run.json) and its stderr (OUT/run.log: progress, the
# memory and MVCC-versions lines).
#
# usage: tpcc_memory.sh OUT PERIOD -- <tpcc run arguments>
set -euo pipefail
out=$1 period=$2
shift 2
[ "${1:-}" = "--" ] && shift
maestro=${MAESTRO:-target/release/maestro}
mkdir -p "$out"
"$maestro" tpcc run "$@" --json > "$out/run.json" 2> "$out/run.log" &
pid=$!
bash "$(dirname "$0")/sample_rss.sh" "$pid" "$out/rss.csv" "$period"
wait "$pid"
