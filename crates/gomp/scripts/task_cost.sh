#!/usr/bin/env bash
# Instructions per task of the task paths (crates/gomp-bench/c/omp_overhead.c's
# tree and nested parts, run alone) on stock libgomp and on
# libmaestro_gomp.so (release), counted by valgrind's callgrind: robust on a
# shared machine, unlike wall time, and this machine's VM has no hardware
# counters for `perf stat`. Each figure is the difference between a run of R2
# and one of R1 repetitions, divided by the tasks in between (start-up cancels).
#
# Team of 1 by default: deterministic, and it separates the two paths — the
# nested producer is past the throttle at once, so its tasks are *included*
# (run at once); the tree stays under it, so its tasks are *deferred* and run by
# taskwait. With THREADS=2 valgrind serializes the threads and the figures
# depend on its thread switching (libgomp's spinning counts too).
#
# Usage: crates/gomp/scripts/task_cost.sh [THREADS]
# Environment: CC (default gcc), MAESTRO_GOMP_LIB (a directory holding the
# libmaestro_gomp.so to use instead of building target/release's).
set -euo pipefail

threads="${1:-1}"
root="$(cd "$(dirname "$0")/../../.." && pwd)"
cc="${CC:-gcc}"
command -v valgrind >/dev/null || { echo "task_cost.sh needs valgrind" >&2; exit 2; }
if [ -n "${MAESTRO_GOMP_LIB:-}" ]; then
  libdir="$MAESTRO_GOMP_LIB"
else
  (cd "$root" && nice -n 19 cargo build --release -p maestro-gomp -j 1 >&2)
  libdir="$root/target/release"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$libdir/libmaestro_gomp.so" "$work/"
src="$root/crates/gomp-bench/c/omp_overhead.c"
"$cc" -fopenmp -O2 "$src" -o "$work/stock"
"$cc" -fopenmp -O2 -c "$src" -o "$work/task_cost.o"
"$cc" "$work/task_cost.o" -o "$work/ours" -L "$work" -lmaestro_gomp -Wl,-rpath,"$work"

# instructions BIN WHICH REPS: instructions of the whole run.
instructions() {
  nice -n 19 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$threads" "$3" "$2" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

for which in nested tree; do
  if [ "$which" = nested ]; then r1=10000; r2=20000; per=2; else r1=5; r2=10; per=2046; fi
  for bin in stock ours; do
    a="$(instructions "$work/$bin" "$which" "$r1")"
    b="$(instructions "$work/$bin" "$which" "$r2")"
    echo "$which $bin threads=$threads $(( (b - a) / ((r2 - r1) * per) )) instructions/task"
  done
done
