#!/usr/bin/env bash
# What the team-thread modes cost (crates/gomp/PROTOCOL.md, "threadprivate"):
# threads_cost.c (µs per empty region, per region with a barrier, per region
# updating a threadprivate counter; team of 2, best of 15 batches of 2000)
# built against stock libgomp and against libmaestro_gomp.so (release), run in
# rounds that rotate through the configurations; reports the median of each
# figure over the rounds.
#
# Configurations: stock libgomp; ours with MAESTRO_OMP_THREADS=scheduler, with
# the default `auto` (no thread-local storage in the program: scheduler mode,
# plus the per-fork look at the loader), and =dedicated; the -DTP build
# (threadprivate) on stock and on ours under `auto` (which picks dedicated).
#
# Usage: crates/gomp/scripts/threads_cost.sh [--rounds N] [--out DIR]
# Environment: CC (default gcc), MAESTRO_GOMP_LIB (a directory holding the
# libmaestro_gomp.so to use instead of building target/release's).
set -euo pipefail

rounds=7
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "$0")/../../.." && pwd)"
src="$root/crates/gomp/scripts/threads_cost.c"
cc="${CC:-gcc}"
if [ -n "${MAESTRO_GOMP_LIB:-}" ]; then
  libdir="$MAESTRO_GOMP_LIB"
else
  (cd "$root" && nice -n 19 cargo build --release -p maestro-gomp >&2)
  libdir="$root/target/release"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$libdir/libmaestro_gomp.so" "$work/"
for variant in plain tp; do
  flags=()
  [ "$variant" = tp ] && flags=(-DTP)
  "$cc" -fopenmp -O2 "${flags[@]}" -c "$src" -o "$work/$variant.o"
  "$cc" "$work/$variant.o" -o "$work/ours-$variant" -L"$work" -lmaestro_gomp -Wl,-rpath,"$work"
  "$cc" -fopenmp "$work/$variant.o" -o "$work/stock-$variant"
done

configs=(
  "stock|stock-plain|"
  "ours-scheduler|ours-plain|MAESTRO_OMP_THREADS=scheduler"
  "ours-auto|ours-plain|"
  "ours-dedicated|ours-plain|MAESTRO_OMP_THREADS=dedicated"
  "stock-threadprivate|stock-tp|"
  "ours-threadprivate-auto|ours-tp|"
)
: >"$work/results.tsv"
for round in $(seq 1 "$rounds"); do
  n=${#configs[@]}
  for i in $(seq 0 $((n - 1))); do
    IFS='|' read -r label bin envs <<<"${configs[$(((i + round) % n))]}"
    # shellcheck disable=SC2086
    line=$(env -u LD_LIBRARY_PATH $envs nice -n 19 "$work/$bin")
    printf '%s\t%s\n' "$label" "$line" >>"$work/results.tsv"
  done
  echo "round $round of $rounds done" >&2
done

python3 - "$work/results.tsv" "$rounds" "$out" <<'EOF'
import json, os, statistics, sys, datetime
path, rounds, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = {}
for line in open(path):
    label, figures = line.rstrip("\n").split("\t")
    for k, v in json.loads(figures).items():
        runs.setdefault(label, {}).setdefault(k, []).append(v)
report = {
    "what": "µs per operation, team of 2, best of 15 batches of 2000 per run; median (min, max) over the rounds",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "rounds": rounds,
    "load_average_at_end": os.getloadavg()[0],
    "median": {l: {k: statistics.median(v) for k, v in f.items()} for l, f in runs.items()},
    "min": {l: {k: min(v) for k, v in f.items()} for l, f in runs.items()},
    "max": {l: {k: max(v) for k, v in f.items()} for l, f in runs.items()},
    "runs": runs,
}
text = json.dumps(report, indent=2)
print(text)
if out:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "threads_cost.json"), "w") as f:
        f.write(text + "\n")
EOF
