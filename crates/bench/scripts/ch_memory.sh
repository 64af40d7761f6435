#!/usr/bin/env bash
# Resident memory of CH-benCHmark's two analytical engines over one long run each:
# `plans` reads the MVCC row versions directly, `sql` also keeps the column mirror
# (a column main per TPC-C table plus the delta of the rows written since it,
# `crates/ch/src/columns/`), so the difference between the two is what the dual
# format costs. For each engine, starts `maestro ch run ARGS --olap-engine E --json`
# and samples its VmRSS every PERIOD seconds into OUT/E/rss.csv (seconds,rss_bytes),
# keeping the run's JSON (OUT/E/run.json) and stderr (OUT/E/run.log).
#
# usage: ch_memory.sh OUT PERIOD "ENGINES" -- <ch run arguments>
set -euo pipefail
out=$1 period=$2 engines=$3
shift 3
[ "${1:-}" = "--" ] && shift
maestro=${MAESTRO:-target/release/maestro}
for engine in $engines; do
  dir="$out/$engine"
  mkdir -p "$dir"
  echo "$(date +%T) ch run --olap-engine $engine $*" >&2
  "$maestro" ch run "$@" --olap-engine "$engine" --json > "$dir/run.json" 2> "$dir/run.log" &
  pid=$!
  bash "$(dirname "$0")/sample_rss.sh" "$pid" "$dir/rss.csv" "$period"
  wait "$pid"
done
