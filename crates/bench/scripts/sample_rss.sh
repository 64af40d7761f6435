#!/usr/bin/env bash
# Samples process PID's resident memory (VmRSS) every PERIOD seconds into CSV
# (seconds,rss_bytes; bytes as integers) until the process exits. Used by
# tpcc_memory.sh and ch_memory.sh.
#
# usage: sample_rss.sh PID CSV PERIOD
set -euo pipefail
pid=$1 csv=$2 period=$3
echo "seconds,rss_bytes" > "$csv"
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {printf "%.0f\n", $2 * 1024}' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$rss" ] && echo "$(( $(date +%s) - start )),$rss" >> "$csv"
  sleep "$period"
done
