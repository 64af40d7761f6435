#!/usr/bin/env bash
# Concurrent writers through the wire: PostgreSQL's own pgbench runs its
# TPC-B-like transactions (BEGIN … END blocks of UPDATE/SELECT/INSERT) from
# C clients against `maestro serve`, for each build given, side by side.
#
#   bash crates/bench/scripts/pgbench_writers.sh OUT REPS SECONDS "CLIENTS…" NAME=SERVER…
#
# e.g. `… docs/results/DAY/pgbench 3 5 "1 4 16" before=/tmp/m-old after=target/release/maestro
# postgres=pg:/usr/lib/postgresql/15/bin`. SERVER is a `maestro` binary, or `pg:BINDIR`
# for PostgreSQL itself as the peer: a fresh cluster per run (initdb, run as the
# `postgres` user), in memory as far as PostgreSQL goes (fsync, synchronous_commit and
# full_page_writes off: `maestro serve` without --data-dir logs nothing), and every
# transaction REPEATABLE READ (PostgreSQL's default is READ COMMITTED; Maestro's is
# snapshot isolation, i.e. REPEATABLE READ).
# Needs pgbench (Debian: postgresql-client). For every repetition (the
# builds' order rotated), script (simple_update, tpcb_like: pgbench/*.sql)
# and client count, each build gets a fresh server with pgbench's tables at
# scale SCALE (environment, default 1: 100 000 × SCALE accounts, 10 × SCALE
# tellers, SCALE branches; recorded in the JSON) and one run of
# `pgbench -n -f SCRIPT -c C -j 2 -T SECONDS --max-tries 1000` (a
# serialization failure, 40001, is retried by pgbench and counted). Writes
# OUT/pgbench.json: every run, and per script and client count the median
# [min–max] of each build's transactions/s and of the per-repetition ratio
# of every build to the first named one. PROTOCOL=prepared (environment)
# runs pgbench with `-M prepared` (Parse once, Bind/Execute per
# transaction, as drivers with server-side prepared statements do) instead
# of the simple query protocol; it is recorded in the JSON. SCRIPTS="…"
# (environment) chooses the scripts (default "simple_update tpcb_like";
# also `upsert`: one INSERT … ON CONFLICT DO UPDATE per transaction).
# ISOLATION="read committed" (environment; default "repeatable read") is the
# level every server's blocks run at, sent as PGOPTIONS'
# default_transaction_isolation (Maestro builds before 2026-11-28's
# isolation levels ignore it and run REPEATABLE READ); recorded in the JSON.
set -euo pipefail
PROTOCOL=${PROTOCOL:-simple}
ISOLATION=${ISOLATION:-repeatable read}
LEVEL_OPTION="-c default_transaction_isolation=${ISOLATION// /\\ }"
SCRIPTS=${SCRIPTS:-simple_update tpcb_like}
OUT=$1 REPS=$2 SECS=$3 CLIENTS=$4
shift 4
VARIANTS=("$@")
PORT=${PORT:-55470}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v pgbench >/dev/null || { echo "pgbench is missing (apt-get install postgresql-client)" >&2; exit 2; }
mkdir -p "$OUT"
DATA=$(mktemp -d)
trap 'rm -rf "$DATA"' EXIT
SCALE=${SCALE:-1}
python3 - "$DATA" "$SCALE" <<'PY'
import sys
d, scale = sys.argv[1], int(sys.argv[2])
with open(f"{d}/branches.csv", "w") as f:
    f.writelines(f"{b},0,\n" for b in range(2, scale + 1))
with open(f"{d}/tellers.csv", "w") as f:
    f.writelines(f"{t},{(t - 1) // 10 + 1},0,\n" for t in range(1, 10 * scale + 1))
with open(f"{d}/accounts.csv", "w") as f:
    f.writelines(f"{a},{(a - 1) // 100000 + 1},0,\n" for a in range(1, 100000 * scale + 1))
PY
PSQL=(psql -h 127.0.0.1 -p "$PORT" -U maestro -d maestro -X -q -v ON_ERROR_STOP=1)
RUNS="$OUT/runs.jsonl"
: > "$RUNS"
n=${#VARIANTS[@]}
for rep in $(seq 1 "$REPS"); do
  for script in $SCRIPTS; do
    for c in $CLIENTS; do
      for k in $(seq 0 $((n - 1))); do
        v=${VARIANTS[$(( (k + rep - 1) % n ))]}
        name=${v%%=*} bin=${v#*=}
        export PGOPTIONS=
        if [[ $bin == pg:* ]]; then
          pgdir=$(mktemp -d)
          chown postgres "$pgdir"
          runuser -u postgres -- "${bin#pg:}/initdb" -D "$pgdir/data" -U maestro --auth trust \
            > "$DATA/serve-$name.log" 2>&1
          runuser -u postgres -- "${bin#pg:}/postgres" -D "$pgdir/data" -p "$PORT" -k "$pgdir" \
            -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
            -c full_page_writes=off -c max_connections=100 >> "$DATA/serve-$name.log" 2>&1 &
          pid=$!
          for _ in $(seq 1 100); do
            psql -h 127.0.0.1 -p "$PORT" -U maestro -d postgres -X -q -c "create database maestro" \
              >/dev/null 2>&1 && break
            sleep 0.2
          done
        else
          pgdir=
          "$bin" serve --port "$PORT" > "$DATA/serve-$name.log" 2>&1 &
          pid=$!
        fi
        for _ in $(seq 1 100); do "${PSQL[@]}" -c "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
        export PGOPTIONS=$LEVEL_OPTION
        "${PSQL[@]}" -f "$HERE/pgbench/init.sql" \
          -c "\\copy pgbench_branches from '$DATA/branches.csv' csv" \
          -c "\\copy pgbench_tellers from '$DATA/tellers.csv' csv" \
          -c "\\copy pgbench_accounts from '$DATA/accounts.csv' csv" >/dev/null
        log="$OUT/$name-$script-c$c-r$rep.txt"
        pgbench -h 127.0.0.1 -p "$PORT" -U maestro -n -f "$HERE/pgbench/$script.sql" \
          -c "$c" -j 2 -T "$SECS" --max-tries 1000 -M "$PROTOCOL" -D scale="$SCALE" maestro > "$log" 2>&1 || true
        kill "$pid"; wait "$pid" 2>/dev/null || true
        [[ -n $pgdir ]] && rm -rf "$pgdir"
        python3 - "$log" "$name" "$script" "$c" "$rep" >> "$RUNS" <<'PY'
import json, re, sys
log, name, script, clients, rep = sys.argv[1:]
text = open(log).read()
def num(pattern):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None
print(json.dumps({
    "variant": name, "script": script, "clients": int(clients), "rep": int(rep),
    "tps": num(r"tps = ([0-9.]+)"),
    "processed": num(r"actually processed: (\d+)"),
    "failed": num(r"number of failed transactions: (\d+)"),
    "retried": num(r"number of transactions retried: (\d+)"),
    "retries": num(r"total number of retries: (\d+)"),
    "latency_ms": num(r"latency average = ([0-9.]+) ms"),
    "aborted": "aborted" in text,
}))
PY
        echo "rep $rep $script c=$c $name: $(grep -h 'tps =' "$log" || echo 'no tps (see log)')"
      done
    done
  done
done
python3 - "$RUNS" "$OUT/pgbench.json" "$PROTOCOL" "$SCRIPTS" "$ISOLATION" "${VARIANTS[@]}" <<'PY'
import json, os, statistics, sys
runs_path, out, protocol, scripts, isolation, *variants = sys.argv[1:]
names = [v.split("=", 1)[0] for v in variants]
runs = [json.loads(l) for l in open(runs_path)]
summary = []
for script in scripts.split():
    for c in sorted({r["clients"] for r in runs}):
        row = {"script": script, "clients": c}
        sel = [r for r in runs if r["script"] == script and r["clients"] == c]
        for n in names:
            tps = [r["tps"] or 0.0 for r in sel if r["variant"] == n]
            retried = [r["retried"] or 0 for r in sel if r["variant"] == n]
            row[n] = {"tps_median": statistics.median(tps), "tps_min": min(tps),
                      "tps_max": max(tps), "retried_median": statistics.median(retried)}
        for n in names[1:]:
            ratios = []
            for rep in sorted({r["rep"] for r in sel}):
                a = [r["tps"] for r in sel if r["rep"] == rep and r["variant"] == n]
                b = [r["tps"] for r in sel if r["rep"] == rep and r["variant"] == names[0]]
                if a and b and a[0] and b[0]:
                    ratios.append(a[0] / b[0])
            if ratios:
                row[f"{n}_over_{names[0]}"] = {"median": statistics.median(ratios),
                                               "min": min(ratios), "max": max(ratios)}
        summary.append(row)
json.dump({"variants": variants, "protocol": protocol, "isolation": isolation,
           "scale": int(os.environ.get("SCALE", "1")), "runs": runs,
           "summary": summary},
          open(out, "w"), indent=1)
for row in summary:
    print(json.dumps(row))
PY
