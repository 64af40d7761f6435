#!/usr/bin/env bash
# A/B of the column mirror's heap release (`ch run --heap-release after-merge`
# against `never`): REPS rounds, the two variants' order alternating, each a
# `maestro ch run ARGS --olap-engine sql --heap-release V --json` with its
# resident memory sampled every PERIOD seconds. Writes OUT/V-rR.json,
# OUT/V-rR.rss.csv, OUT/V-rR.log and OUT/summary.json: per round the peak
# and last resident bytes, queries per hour, tpmC and merge seconds, and the
# after-merge ÷ never ratios' median and range.
#
# usage: ch_heap_release.sh OUT REPS PERIOD -- <ch run arguments>
set -euo pipefail
out=$1 reps=$2 period=$3
shift 3
[ "${1:-}" = "--" ] && shift
maestro=${MAESTRO:-target/release/maestro}
mkdir -p "$out"
for r in $(seq 1 "$reps"); do
  if [ $((r % 2)) = 1 ]; then order="after-merge never"; else order="never after-merge"; fi
  for v in $order; do
    echo "$(date +%T) round $r: ch run --heap-release $v $*" >&2
    "$maestro" ch run "$@" --olap-engine sql --heap-release "$v" --json \
      > "$out/$v-r$r.json" 2> "$out/$v-r$r.log" &
    pid=$!
    bash "$(dirname "$0")/sample_rss.sh" "$pid" "$out/$v-r$r.rss.csv" "$period"
    wait "$pid"
  done
done
python3 - "$out" "$reps" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
def run(v, r):
    res = json.load(open(f"{out}/{v}-r{r}.json"))["results"]
    m = {x["metric"]: x["value"] for x in res}
    rss = [int(l.split(",")[1]) for l in open(f"{out}/{v}-r{r}.rss.csv").read().split()[1:]]
    return {"peak_rss_bytes": max(rss), "last_rss_bytes": rss[-1],
            "queries_per_hour": m["queries_per_hour"], "tpmC": m["tpmC"],
            "mirror_merge_seconds": m["mirror_merge_seconds"],
            "mirror_main_bytes": m["mirror_main_bytes"]}
rounds = [{v: run(v, r) for v in ("after-merge", "never")} for r in range(1, reps + 1)]
ratios = {}
for k in rounds[0]["never"]:
    rs = [x["after-merge"][k] / x["never"][k] for x in rounds if x["never"][k]]
    if rs:
        ratios[k] = {"median": statistics.median(rs), "min": min(rs), "max": max(rs)}
json.dump({"rounds": rounds, "after_merge_over_never": ratios}, open(f"{out}/summary.json", "w"), indent=1)
for k, v in ratios.items():
    print(f"{k:22} after-merge / never: {v['median']:.3f} [{v['min']:.3f}-{v['max']:.3f}]")
PY
