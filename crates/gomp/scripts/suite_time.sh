#!/usr/bin/env bash
# The C suite's total time on our runtime against stock libgomp (issue 15's
# check: "programs linked against ours take no longer than with stock libgomp
# in total over the C suite — measure both in the same run").
#
# Every program of crates/gomp/tests/c marked `maestro-test: also-stock` is
# built twice from one object file — linked against libmaestro_gomp.so (release
# build) and with `gcc -fopenmp` against stock libgomp — and run with its
# `maestro-test: env` settings. Each repetition runs every program on both
# runtimes back to back, the order of the two alternating between
# repetitions (and, with --with-dedicated, ours again with
# MAESTRO_OMP_THREADS=dedicated); a run's time is its wall-clock time
# including process start. Reported: per runtime the median over the
# repetitions of the total, the ratio of those medians (ours / stock), the
# median of the per-repetition ratios, and per program the median times.
# A program that fails (or, for `expect-fail`, succeeds) stops the script.
#
# Usage: crates/gomp/scripts/suite_time.sh [--reps N] [--out DIR] [--with-dedicated]
#   --reps N          repetitions (default 5, at least 3)
#   --out DIR         also write DIR/suite_time.json
#   --with-dedicated  also time ours with MAESTRO_OMP_THREADS=dedicated
# Environment: CC (default gcc), MAESTRO_GOMP_LIB (a directory holding a
# libmaestro_gomp.so to use instead of building target/release's).
set -euo pipefail

reps=5
out=""
dedicated=0
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --with-dedicated) dedicated=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [ "$reps" -lt 3 ]; then
  echo "--reps must be at least 3" >&2
  exit 2
fi

root="$(cd "$(dirname "$0")/../../.." && pwd)"
suite="$root/crates/gomp/tests/c"
cc="${CC:-gcc}"
if [ -n "${MAESTRO_GOMP_LIB:-}" ]; then
  libdir="$MAESTRO_GOMP_LIB"
else
  (cd "$root" && nice -n 19 cargo build --release -p maestro-gomp >&2)
  libdir="$root/target/release"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A private copy: a concurrent cargo build may rewrite target/release.
cp "$libdir/libmaestro_gomp.so" "$work/"

programs=()
for src in "$suite"/*.c; do
  grep -q "maestro-test: also-stock" "$src" || continue
  name="$(basename "$src" .c)"
  "$cc" -fopenmp -O2 -c "$src" -o "$work/$name.o"
  "$cc" "$work/$name.o" -o "$work/$name-ours" -L"$work" -lmaestro_gomp \
    -Wl,-rpath,"$work" -lm
  "$cc" -fopenmp "$work/$name.o" -o "$work/$name-stock" -lm
  programs+=("$name")
done

# A program's `maestro-test: env KEY=VALUE` settings (values may hold spaces).
settings() {
  sed -n 's/.*maestro-test: env \(.*\)$/\1/p' "$suite/$1.c" | sed 's/[[:space:]]*\*\/[[:space:]]*$//'
}
expect_fail() {
  grep -q "maestro-test: expect-fail" "$suite/$1.c"
}

# Runs one program on one runtime; sets `elapsed` to its wall-clock µs. Stops
# the script if the program did not end as its header expects.
run_one() {
  local name="$1" runtime="$2" bin envs=() start end status=0
  mapfile -t envs < <(settings "$name")
  case "$runtime" in
    ours) bin="$work/$name-ours" ;;
    dedicated) bin="$work/$name-ours"; envs+=(MAESTRO_OMP_THREADS=dedicated) ;;
    stock) bin="$work/$name-stock" ;;
  esac
  start=$(date +%s%N)
  env -u LD_LIBRARY_PATH "${envs[@]}" timeout 120 nice -n 19 "$bin" >"$work/out" 2>&1 || status=$?
  end=$(date +%s%N)
  if expect_fail "$name"; then
    if [ "$status" -eq 0 ]; then
      echo "$name ($runtime) should have failed" >&2
      exit 1
    fi
  elif [ "$status" -ne 0 ]; then
    echo "$name ($runtime) failed ($status):" >&2
    cat "$work/out" >&2
    exit 1
  fi
  elapsed=$(( (end - start) / 1000 ))
}

runtimes=(ours stock)
[ "$dedicated" = 1 ] && runtimes+=(dedicated)
: >"$work/times.tsv"
for rep in $(seq 1 "$reps"); do
  order=("${runtimes[@]}")
  if [ $((rep % 2)) = 0 ]; then
    order=(stock ours)
    [ "$dedicated" = 1 ] && order+=(dedicated)
  fi
  for name in "${programs[@]}"; do
    for rt in "${order[@]}"; do
      run_one "$name" "$rt"
      printf '%s\t%s\t%s\t%s\n' "$rep" "$rt" "$name" "$elapsed" >>"$work/times.tsv"
    done
  done
  echo "repetition $rep of $reps done" >&2
done

commit="$(cd "$root" && git rev-parse --short HEAD)$(cd "$root" && git diff --quiet HEAD -- crates/gomp/src || echo '+dirty')"
python3 - "$work/times.tsv" "$reps" "$commit" "$cc" "$out" <<'EOF'
import json, os, platform, statistics, subprocess, sys, datetime
path, reps, commit, cc, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rows = [l.rstrip("\n").split("\t") for l in open(path)]
runtimes = sorted({r[1] for r in rows}, key=["ours", "stock", "dedicated"].index)
programs = sorted({r[2] for r in rows})
us = {(int(r[0]), r[1], r[2]): int(r[3]) for r in rows}
totals = {rt: [sum(us[(k, rt, p)] for p in programs) / 1e6 for k in range(1, reps + 1)] for rt in runtimes}
median = {rt: statistics.median(v) for rt, v in totals.items()}
per_rep = [totals["ours"][k] / totals["stock"][k] for k in range(reps)]
gcc = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
report = {
    "what": "C suite (crates/gomp/tests/c, programs marked also-stock): total wall-clock seconds per runtime, each program run once per repetition on each runtime, the runtimes' order alternating",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "commit": commit,
    "compiler": gcc,
    "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
    "repetitions": reps,
    "programs": programs,
    "total_seconds": totals,
    "median_total_seconds": median,
    "ratio_ours_to_stock_of_medians": median["ours"] / median["stock"],
    "ratio_ours_to_stock_per_repetition": per_rep,
    "ratio_ours_to_stock_median_of_repetitions": statistics.median(per_rep),
    "median_seconds_by_program": {
        p: {rt: statistics.median(us[(k, rt, p)] / 1e6 for k in range(1, reps + 1)) for rt in runtimes}
        for p in programs
    },
}
by_program = report["median_seconds_by_program"]
ratios = {p: by_program[p]["ours"] / by_program[p]["stock"] for p in programs}
report["geometric_mean_of_program_ratios_ours_to_stock"] = statistics.geometric_mean(ratios.values())
report["programs_slower_on_ours"] = sorted(p for p, r in ratios.items() if r > 1)
if "dedicated" in runtimes:
    report["ratio_dedicated_to_stock_of_medians"] = median["dedicated"] / median["stock"]
text = json.dumps(report, indent=2)
print(text)
if out:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "suite_time.json"), "w") as f:
        f.write(text + "\n")
print("median total: " + ", ".join(f"{rt} {median[rt]:.3f} s" for rt in runtimes)
      + f"; ours / stock {median['ours'] / median['stock']:.3f}"
      + f" (geometric mean over programs {report['geometric_mean_of_program_ratios_ours_to_stock']:.3f})",
      file=sys.stderr)
EOF
