#!/usr/bin/env bash
# A/B of libmaestro_gomp.so before (main 0e4534b) and after (branch h12-omp3):
# `maestro bench omp --parts overhead` with MAESTRO_GOMP_LIB_DIR pointing at
# each library, alternated ROUNDS times at nice 19 on a shared 2-core VM
# (indicative only: other sessions were building). The maestro binary is one
# build of main (the C benchmark is embedded in it; only the library differs).
# Usage: run.sh MAESTRO_BIN BEFORE_LIB_DIR AFTER_LIB_DIR [ROUNDS]
set -euo pipefail
bin="$1"; before="$2"; after="$3"; rounds="${4:-3}"
out="$(cd "$(dirname "$0")" && pwd)"
for i in $(seq 1 "$rounds"); do
  for v in before after; do
    if [ "$v" = before ]; then lib="$before"; else lib="$after"; fi
    MAESTRO_GOMP_LIB_DIR="$lib" nice -n 19 "$bin" bench omp --parts overhead \
      --contexts 2 --reps 9 --runtimes libgomp,maestro-gomp --out "$out/$v-$i" >/dev/null
  done
done
