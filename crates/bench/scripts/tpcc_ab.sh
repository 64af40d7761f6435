#!/usr/bin/env bash
# Two builds side by side on the same TPC-C run: binary A (e.g. the commit before a
# change, built in a worktree) and binary B (this one), REPS repetitions with the
# order rotated; ratio B ÷ A of tx/s within each repetition. Raw JSON in OUT/raw/,
# summary in OUT/summary.json and stdout.
#
# usage: tpcc_ab.sh A_BINARY B_BINARY OUT [REPS=3] -- <tpcc run arguments>
set -euo pipefail
a=$1 b=$2 out=$3 reps=${4:-3}
shift 4
[ "${1:-}" = "--" ] && shift
mkdir -p "$out/raw"
bins=("$a" "$b")
names=(a b)
for ((rep = 0; rep < reps; rep++)); do
  for ((k = 0; k < 2; k++)); do
    i=$(((k + rep) % 2))
    echo "rep $((rep + 1))/$reps: ${names[$i]}" >&2
    "${bins[$i]}" tpcc run "$@" --json 2>/dev/null > "$out/raw/${names[$i]}-rep$rep.json"
  done
done
python3 - "$out" "$reps" "$a" "$b" "$*" <<'PY'
import json, sys, statistics
out, reps, a, b, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def tps(name, r):
    d = json.load(open(f"{out}/raw/{name}-rep{r}.json"))
    return next(x["value"] for x in d["results"] if x["metric"] == "transactions_per_second")
ta = [tps("a", r) for r in range(reps)]
tb = [tps("b", r) for r in range(reps)]
ratio = [tb[r] / ta[r] for r in range(reps)]
summary = {"experiment": "tpcc-ab", "a": a, "b": b, "args": args, "reps": reps, "results": [
    {"variant": "a", "metric": "transactions_per_second", "value": statistics.median(ta), "min": min(ta), "max": max(ta), "samples": ta},
    {"variant": "b", "metric": "transactions_per_second", "value": statistics.median(tb), "min": min(tb), "max": max(tb), "samples": tb,
     "ratio_vs_a": statistics.median(ratio), "ratio_vs_a_min": min(ratio), "ratio_vs_a_max": max(ratio)}]}
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
print(f"a {statistics.median(ta):.0f} ({min(ta):.0f}–{max(ta):.0f})  b {statistics.median(tb):.0f} ({min(tb):.0f}–{max(tb):.0f})  "
      f"b ÷ a {statistics.median(ratio):.2f} ({min(ratio):.2f}–{max(ratio):.2f})  [{args}]")
PY
