#!/usr/bin/env bash
# Regenerates the expected answers of tests/answers.rs with DuckDB: writes the
# deterministic fixture's tables (examples/answer_fixture.rs) to a temporary
# directory and runs every CH query on them (scripts/duckdb_answers.py).
# Needs python3 with duckdb (pip install duckdb).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo run --release -p maestro-ch --example answer_fixture -- "$tmp"
python3 scripts/duckdb_answers.py "$tmp" tests/answers --max-rows 500
