#!/usr/bin/env python3
"""Checks the expected results of the sqllogictest suite (`crates/sql/tests/slt/*.slt`)
against DuckDB, an engine independent of Maestro.

Run from the repository root, with a Python that has `duckdb` and `tpchgen-cli`
(the versions of crates/tpch/answers/generate.py: duckdb 2.0.0, tpchgen-cli 4.0.0):

    python3 crates/sql/tests/slt_duckdb.py            # all .slt files
    python3 crates/sql/tests/slt_duckdb.py dates.slt  # some of them
    python3 crates/sql/tests/slt_duckdb.py -v         # also print every agreeing record

What it does:

1. Generates TPC-H SF 0.01 with tpchgen-cli and loads it into DuckDB with the spec's
   column types, by importing `generate_data` and `load` from
   crates/tpch/answers/generate.py (the same rows the `tpchgen` crate v4 gives
   Maestro's loader). Each .slt file then runs on its own copy of that database, so a
   file that changes data does not affect another.
2. Parses each file in the sqllogictest dialect that `crates/sql/tests/slt.rs` runs
   (the `sqllogictest` crate 0.29): `statement ok|error [regex]|count N`, `query <types>
   [nosort|rowsort|valuesort]` with `----` and result lines, `#` comments, and the
   runner's one extension: a first SQL line `-- params: v1 | v2 | ...` binds the texts
   to `$1, $2, ...` (`NULL` is NULL). DuckDB gets them as prepared-statement values
   (text; DuckDB casts each to the type it infers for the `$n`); where DuckDB cannot
   infer a type that PostgreSQL would (see PARAM_TYPES) the `$n` is cast explicitly,
   and a boolean text is read with PostgreSQL's rules (`on`/`off`, `yes`/`no`, ...).
   Statements follow the runner's rules (slt.rs's header): `statement count N`
   compares DuckDB's affected-row count (its `Count` row; none, as for CREATE/DROP,
   is 0); BEGIN/START TRANSACTION opens a transaction unless one is open,
   COMMIT/ROLLBACK end it (nothing when none is open); an error inside it rolls it
   back; every other statement autocommits. A `statement error` record that DuckDB
   runs anyway is undone (run inside BEGIN … ROLLBACK, or the open transaction rolled
   back, as Maestro's error does), so the file goes on from Maestro's state. A
   statement DuckDB lacks the syntax for runs as the equivalent listed in DUCKDB_SQL.
3. Formats DuckDB's rows as the runner formats Maestro's: integers as digits, DECIMALs
   with their scale's digits, doubles in the shortest round-trip form written
   positionally (Rust's `{}` for f64, plus `.0` when integral), dates `YYYY-MM-DD`,
   booleans `true`/`false`, NULL as `NULL`, the empty string as `(empty)`; column
   type letters `I` (integers), `R` (DECIMAL, DOUBLE), `T` (the rest). Rows are sorted
   (rowsort/valuesort) and whitespace-normalised exactly as the runner does, and
   compared as text: the runner has no float tolerance.
4. Reports every record as one of
     ok        DuckDB gives the expected text (and column types), or rejects a
               `statement error` statement;
     close     equal up to a documented representation difference (a double within
               1e-12 relative, or a TIMESTAMP at midnight where Maestro returns a DATE:
               PostgreSQL and DuckDB type `date + interval` as timestamp);
     pg-note   ok, but PostgreSQL would answer otherwise (PG_NOTES: integer division,
               where Maestro divides into a double as DuckDB does);
     adapted   ok, run as DUCKDB_SQL's rewrite (e.g. DROP TABLE of two tables);
     DIFFERS   anything else. A DIFFERS record listed in KNOWN (by file and SQL) is
               printed with the verdict reached by hand (PostgreSQL semantics where
               DuckDB differs, e.g. NULLs first in DESC order; a construct Maestro
               reports as unsupported); an unlisted one makes the exit status 1.
   A new or changed record that differs from DuckDB must be judged before it is
   added to KNOWN: DuckDB is the reference for answers on data, PostgreSQL's
   documented semantics where the two engines disagree.

`known_bugs.slt` (records whose expectation is correct but Maestro's answer is not;
slt.rs expects each of them to fail) is checked like the other files.
"""

import argparse
import datetime
import decimal
import math
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SLT_DIR = ROOT / "crates/sql/tests/slt"

# generate.py looks tpchgen-cli up on PATH: the venv's bin directory holds it.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
sys.path.insert(0, str(ROOT / "crates/tpch/answers"))
import generate as g  # noqa: E402
import duckdb  # noqa: E402

# Parameters whose type PostgreSQL infers from the context (an operand of `+ interval`
# is a date or timestamp, of `numeric * $n` numeric, a WHERE condition boolean) but
# DuckDB leaves ambiguous: (file, SQL substring) -> {n: DuckDB type}. "NUMERIC" means
# PostgreSQL's unconstrained numeric, whose value keeps the scale it is written with
# ('2.5' has scale 1); DuckDB has no such type, so the text is inlined as a DECIMAL
# literal, which DuckDB types the same way (DECIMAL(2,1)).
PARAM_TYPES = {
    ("parameters.slt", "o_orderdate < $1 + interval '1' year"): {1: "DATE"},
    ("parameters.slt", "l_quantity * $1"): {1: "NUMERIC"},
    ("parameters.slt", "from nation where $1"): {1: "BOOLEAN"},
}

# Records that are not "ok", judged by hand: (file, SQL substring) -> verdict. Only
# records whose expectation stands belong here: PostgreSQL semantics where DuckDB
# differs, a construct Maestro does not support (an error, never a wrong answer), or a
# representation difference. A DIFFERS record not listed makes the exit status 1.
UNSUPPORTED = ("PostgreSQL and DuckDB answer it; Maestro does not support the construct "
               "yet and says so (an error, not a wrong answer).")
KNOWN = {
    ("timestamps.slt", "2019-12-31 12:00:00.2499999"):
        "PostgreSQL rounds input fractional seconds to the microsecond (rint in "
        "ParseFractionalSecond): .2499999 is .250000, as in Maestro; DuckDB truncates.",
    ("timestamps.slt", "select id, ts from events order by ts"):
        "Same instants. PostgreSQL prints fractional seconds without trailing zeros "
        "(12:00:00.25), as Maestro does; DuckDB pads them to six digits.",
    ("aggregates.slt", "select sum(distinct n_regionkey)"): UNSUPPORTED,
    ("arithmetic.slt", "select 99999999999999999999"):
        "PostgreSQL types it numeric and answers; Maestro's integer literals are 64-bit "
        "and one beyond is rejected (a limitation the test states).",
    ("dates.slt", "interval"):
        "Same day. PostgreSQL (and DuckDB) type date ± interval as timestamp "
        "(YYYY-MM-DD 00:00:00); Maestro keeps a date, its choice for TPC-H-style date "
        "arithmetic (only ever compared with dates there).",
    ("errors.slt", "select count(*) from nation where n_nationkey"):
        "PostgreSQL: ERROR argument of WHERE must be type boolean, not type bigint. DuckDB "
        "casts the integer to boolean. Maestro follows PostgreSQL.",
    ("errors.slt", "union select"): UNSUPPORTED,
    ("errors.slt", "select lower(n_name)"): UNSUPPORTED,
    ("errors.slt", "select 1; select 2"):
        "PostgreSQL's extended protocol rejects several statements in one Parse ("
        "'cannot insert multiple commands into a prepared statement'), as Maestro does; "
        "DuckDB's execute() runs them all.",
    ("grouping.slt", "select n_nationkey >= 10, count(*)"): UNSUPPORTED,
    ("joins.slt", "full join"): UNSUPPORTED,
    ("parameters.slt", "-- params: 1.5\n"):
        "PostgreSQL infers $1 as bigint from n_nationkey and rejects '1.5' (invalid input "
        "syntax for type bigint), as Maestro does; DuckDB converts the text.",
    ("with_queries.slt", "with recursive"): UNSUPPORTED,
    ("ordering.slt", "order by o_orderkey desc, c_custkey"):
        "PostgreSQL: NULLs sort as larger than any value, so first in DESC order unless "
        "NULLS LAST (docs, ORDER BY); DuckDB puts NULLs last in both directions. Maestro "
        "follows PostgreSQL.",
    # ddl.slt, dml.slt: a record Maestro rejects that DuckDB runs is undone in DuckDB
    # (Session.run_rejected), so the file goes on from Maestro's state.
    ("ddl.slt", "create table u (a double)"):
        "PostgreSQL rejects it too: its type is DOUBLE PRECISION, and 'double' is no type "
        "name there (ERROR type \"double\" does not exist); DuckDB takes 'double' as an "
        "alias. Maestro rejects it (no DOUBLE columns at all).",
    ("ddl.slt", "create table u (a boolean)"): UNSUPPORTED,
    ("ddl.slt", "create table u (a numeric)"):
        "PostgreSQL creates an unconstrained numeric column (DuckDB a DECIMAL(18,3)); Maestro's "
        "stored decimals need a precision and scale and it says so (an error, not a wrong "
        "answer).",
    ("ddl.slt", "create table u (a decimal(30,20))"):
        "PostgreSQL (precision up to 1000) and DuckDB (up to 38) accept it; Maestro's "
        "decimals hold at most 18 fractional digits and it says so (a stated limitation).",
    ("ddl.slt", "create table u (a int null not null)"):
        "PostgreSQL refuses it too: ERROR conflicting NULL/NOT NULL declarations for column "
        "\"a\" of table \"u\"; DuckDB takes the last of the two.",
    ("stored_nulls.slt", "select label from c where k not in (select id from p where p.qty"):
        "PostgreSQL and DuckDB answer it (each row's subquery decides its NULL answer); "
        "Maestro answers NOT IN over NULLs only uncorrelated and refuses this one (a stated "
        "limitation, an error).",
    ("ddl.slt", "select * from MixedCase"):
        "PostgreSQL folds an unquoted name to lower case, and \"MixedCase\" was created "
        "quoted: ERROR relation \"mixedcase\" does not exist. DuckDB matches identifiers "
        "case-insensitively and finds it. Maestro follows PostgreSQL.",
    ("ddl.slt", "create table avgs as select avg(n_nationkey)"):
        "PostgreSQL creates it (avg of an integer is numeric there); DuckDB creates a DOUBLE "
        "column. Maestro's avg is a DOUBLE and it stores no DOUBLE columns, so it refuses "
        "the table and says why (a stated limitation, an error).",
    ("dml.slt", "insert into t values (5, null, 1, '2024-01-01', 'e')"):
        "PostgreSQL and DuckDB store the NULL (the column was declared without NOT NULL); "
        "Maestro's stored columns are all NOT NULL (ddl.slt: a nullable column is refused), "
        "so it rejects the row with PostgreSQL's not-null violation (an error, not a wrong "
        "answer; nothing is written).",
    ("dml.slt", "insert into t (id, qty, day, name) values (5, 1"):
        "PostgreSQL and DuckDB fill the omitted column with its default, NULL; in Maestro "
        "every column is NOT NULL, so the row is a not-null violation (as PostgreSQL's "
        "would be for a NOT NULL column without a default).",
    ("dml.slt", "'ninechars'"):
        "PostgreSQL: ERROR value too long for type character varying(8) (docs, Character "
        "Types); DuckDB does not enforce VARCHAR(n) lengths. Maestro follows PostgreSQL.",
    ("division.slt", "/ 0"):
        "PostgreSQL: ERROR division by zero (22012) for integers, numerics and doubles; "
        "DuckDB 2.0 gives inf or NULL. Maestro follows PostgreSQL.",
    ("division.slt", "% 0"):
        "PostgreSQL: ERROR division by zero (22012); DuckDB 2.0 gives NULL. Maestro follows "
        "PostgreSQL.",
    ("division.slt", "(n_regionkey - n_regionkey)"):
        "PostgreSQL: ERROR division by zero (22012); DuckDB 2.0 gives inf/NULL and answers. "
        "Maestro follows PostgreSQL.",
    ("division.slt", "(l_tax - l_tax)"):
        "PostgreSQL: ERROR division by zero (22012); DuckDB 2.0 gives inf. Maestro follows "
        "PostgreSQL.",
    ("division.slt", "and n_nationkey / r_regionkey > 5)"):
        "PostgreSQL: ERROR division by zero (22012) on the region-0 pairs; DuckDB 2.0 "
        "divides to inf and answers. Maestro follows PostgreSQL.",
    ("division.slt", "select cast(7 as double) % 2"):
        "PostgreSQL: ERROR operator does not exist: double precision % integer; DuckDB "
        "computes fmod. Maestro follows PostgreSQL (a type error).",
    ("casts.slt", "select cast(n_name as integer)"):
        "PostgreSQL: ERROR invalid input syntax for type integer (22P02); DuckDB: Conversion "
        "Error. Maestro follows PostgreSQL.",
}

# Records where DuckDB agrees with the expectation but PostgreSQL would not: printed
# as "pg-note" every run, so the divergence stays visible.
PG_NOTES = {
    ("arithmetic.slt", "select 1 / 4"):
        "PostgreSQL: integer / integer truncates (0, type integer). DuckDB and Maestro "
        "divide into a double (0.25); Maestro's division is always a DOUBLE (lower/eval.rs).",
    ("ddl.slt", "select x from big_nations where k = 99"):
        "PostgreSQL: 1.2345. There numeric(6,2) * 1.5 is an unconstrained numeric, so "
        "CREATE TABLE AS makes an unconstrained column that keeps any scale. DuckDB types "
        "the product DECIMAL(8,3), as Maestro does (its stored decimals have a fixed "
        "scale, the product's), and both round the inserted 1.2345 to 1.235.",
    ("types.slt", "select 7 / 2"):
        "PostgreSQL: 3 (integer division). DuckDB and Maestro: 3.5 (double).",
}


# Statements DuckDB lacks the syntax for, run as an equivalent sequence: (file, SQL
# substring) -> ([statements], why). Printed as "adapted" every run.
DUCKDB_SQL = {
    ("ddl.slt", 'drop table t, "MixedCase"'): (
        ["drop table t", 'drop table "MixedCase"'],
        "PostgreSQL's DROP TABLE takes a list of tables; DuckDB drops one object at a "
        "time ('Can only drop one object at a time')"),
    ("indexes.slt", "drop index o_key, o_date"): (
        ["drop index o_key", "drop index o_date"],
        "PostgreSQL's DROP INDEX takes a list of indexes; DuckDB drops one object at a "
        "time ('Can only drop one object at a time')"),
}


# ---------------------------------------------------------------------------
class Record:
    def __init__(self, file, line, kind, sql, types=None, sort=None, expected=None,
                 error=None):
        self.file, self.line, self.kind, self.sql = file, line, kind, sql
        self.types, self.sort, self.expected, self.error = types, sort, expected, error
        self.count = None

    def label(self):
        return "%s:%d" % (self.file, self.line)


def parse(path):
    lines = path.read_text().split("\n")
    records = []
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if not s or s.startswith("#"):
            i += 1
            continue
        toks = s.split()
        start = i + 1
        if toks[0] in ("skipif", "onlyif", "hash-threshold", "halt", "control", "include",
                       "sleep", "system", "connection", "subtest"):
            raise SystemExit("%s:%d: '%s' is not handled by this checker" % (path.name, start, toks[0]))
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            body.append(lines[i])
            i += 1
        sql = "\n".join(body)
        if toks[0] == "statement":
            rec = Record(path.name, start, "statement", sql)
            if toks[1] == "ok":
                rec.kind = "ok"
            elif toks[1] == "error":
                rec.kind = "error"
                rec.error = " ".join(toks[2:])
            elif toks[1] == "count" and len(toks) == 3 and toks[2].isdigit():
                rec.kind = "count"
                rec.count = int(toks[2])
            else:
                raise SystemExit("%s:%d: statement %s not handled" % (path.name, start, toks[1]))
            if i < len(lines) and lines[i].strip() == "----":
                raise SystemExit("%s:%d: multi-line errors not handled" % (path.name, start))
        elif toks[0] == "query":
            if toks[1] == "error":
                rec = Record(path.name, start, "error", sql, error=" ".join(toks[2:]))
            else:
                sort = toks[2] if len(toks) > 2 else None
                expected = []
                if i < len(lines) and lines[i].strip() == "----":
                    i += 1
                    while i < len(lines) and lines[i].strip():
                        expected.append(lines[i])
                        i += 1
                rec = Record(path.name, start, "query", sql, types=toks[1], sort=sort,
                             expected=expected)
        else:
            raise SystemExit("%s:%d: unknown record %r" % (path.name, start, s))
        records.append(rec)
    return records


def split_params(sql):
    first = sql.split("\n", 1)[0]
    m = re.match(r"\s*-- params:(.*)$", first)
    if not m:
        return sql, None
    rest = sql[len(first):]
    return rest, [t.strip() for t in m.group(1).split("|")]


# ---------------------------------------------------------------------------
# Formatting (as slt.rs's `cell` and `column_type`)
# ---------------------------------------------------------------------------
def fmt_double(x):
    """Rust's `{}` for f64 (shortest round-trip digits, never an exponent), plus `.0`."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    s = format(decimal.Decimal(repr(x)), "f")
    if "." not in s:
        s += ".0"
    return s


def cell(v, typ):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, decimal.Decimal):
        m = re.match(r"DECIMAL\(\d+,(\d+)\)", typ)
        scale = int(m.group(1)) if m else 0
        return format(v.quantize(decimal.Decimal(1).scaleb(-scale)), "f")
    if isinstance(v, float):
        return fmt_double(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, str):
        return "(empty)" if v == "" else v
    return str(v)


def type_letter(typ):
    t = typ.upper()
    if t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
             "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"):
        return "I"
    if t.startswith("DECIMAL") or t in ("DOUBLE", "FLOAT", "REAL"):
        return "R"
    return "T"


def normalize(s):
    return " ".join(s.split())


def pg_bool(text):
    """PostgreSQL's boolean input (boolin): a unique prefix of true/false/yes/no, on/off, 1/0."""
    t = text.strip().lower()
    if not t:
        raise ValueError("invalid input syntax for type boolean")
    for word, val in (("true", True), ("false", False), ("yes", True), ("no", False)):
        if word.startswith(t):
            return val
    if t in ("on", "1"):
        return True
    if t in ("off", "of", "0"):
        return False
    raise ValueError('invalid input syntax for type boolean: "%s"' % text)


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------
def run_duckdb(con, rec):
    """(types, rows as lists of cells, column names) or raises duckdb.Error. A record
    listed in DUCKDB_SQL runs as its rewrite (the last statement's result counts)."""
    rewrite = known(rec, DUCKDB_SQL)
    if rewrite is not None:
        for stmt in rewrite[0][:-1]:
            con.execute(stmt)
        rec = Record(rec.file, rec.line, rec.kind, rewrite[0][-1])
    sql, texts = split_params(rec.sql)
    params = None
    if texts is not None:
        casts = {}
        for (f, snippet), c in PARAM_TYPES.items():
            if f == rec.file and snippet in sql:
                casts = c
        params = []
        for n, t in enumerate(texts, 1):
            v = None if t == "NULL" else t
            if casts.get(n) == "BOOLEAN" and v is not None:
                v = pg_bool(v)
            params.append(v)
        for n, ty in sorted(casts.items(), reverse=True):
            if ty == "NUMERIC":
                text = params[n - 1]
                if text is None:
                    text = "NULL"
                elif not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", text or ""):
                    raise ValueError('invalid input syntax for type numeric: "%s"' % text)
                sql = re.sub(r"\$%d\b" % n, "(%s)" % text, sql)
            else:
                sql = re.sub(r"\$%d\b" % n, "CAST($%d AS %s)" % (n, ty), sql)
        # Parameters inlined above are no longer bound; renumber the rest.
        inlined = {n for n, ty in casts.items() if ty == "NUMERIC"}
        if inlined:
            keep = [n for n in range(1, len(params) + 1) if n not in inlined]
            for new, old in enumerate(keep, 1):
                sql = re.sub(r"\$%d\b" % old, "$%d" % new, sql)
            params = [params[n - 1] for n in keep]
    rel = con.sql(sql, params=params) if params is not None else con.sql(sql)
    if rel is None:  # a statement without a result
        return [], [], []
    types = [str(t) for t in rel.types]
    return types, [list(r) for r in rel.fetchall()], list(rel.columns)


def tokens(rows, types, midnight_as_date):
    """Each row as [(token, from a DOUBLE column)], tokens split on whitespace as the
    runner's normalizer does. With midnight_as_date, a TIMESTAMP cell at 00:00:00 is
    written as its date."""
    out = []
    for r in rows:
        line = []
        for v, t in zip(r, types):
            text = cell(v, t)
            if midnight_as_date and t == "TIMESTAMP" and text.endswith(" 00:00:00"):
                text = text[:-len(" 00:00:00")]
            line.extend((tok, t in ("DOUBLE", "FLOAT")) for tok in text.split())
        out.append(line)
    return out


def close_enough(got, want_lines):
    """got: tokens(); equal up to doubles within 4 ulps."""
    if len(got) != len(want_lines):
        return False
    for gl, wl in zip(got, want_lines):
        wt = wl.split()
        if len(gl) != len(wt):
            return False
        for (a, is_double), b in zip(gl, wt):
            if a == b:
                continue
            if not is_double:
                return False
            try:
                fa, fb = float(a), float(b)
            except ValueError:
                return False
            if abs(fa - fb) > 4 * math.ulp(fb):
                return False
    return True


def sort_rows(rows, types, mode):
    """The runner's sort: rows (or single values) as lists of their cell texts."""
    if mode == "rowsort":
        return sorted(rows, key=lambda r: [cell(v, t) for v, t in zip(r, types)]), types
    if mode == "valuesort":
        cells = sorted(((v, t) for r in rows for v, t in zip(r, types)),
                       key=lambda c: cell(*c))
        return [[v] for v, _ in cells], [t for _, t in cells]
    return rows, types


def txn_control(rec):
    """'begin', 'commit', 'rollback' for a transaction-control statement, else None."""
    words = split_params(rec.sql)[0].strip().rstrip(";").lower().split()
    if not words:
        return None
    if words[0] == "begin" or words[:2] == ["start", "transaction"]:
        return "begin"
    if words[0] in ("commit", "end"):
        return "commit"
    if words[0] in ("rollback", "abort"):
        return "rollback"
    return None


class Session:
    """One file's DuckDB connection and the runner's transaction rules (slt.rs's `run`):
    BEGIN opens a transaction unless one is open, COMMIT/ROLLBACK end it (nothing when
    none is open), an error inside it rolls it back, every other statement autocommits."""

    def __init__(self, con):
        self.con, self.txn = con, False

    def rollback(self):
        if self.txn:
            self.con.execute("rollback")
            self.txn = False

    def run(self, rec):
        """run_duckdb under the runner's rules: an error inside a transaction ends it."""
        try:
            return run_duckdb(self.con, rec)
        except (duckdb.Error, ValueError):
            self.rollback()
            raise

    def run_rejected(self, rec):
        """A record Maestro rejects (`statement error`): whatever DuckDB does, leave
        the database as Maestro leaves it, i.e. unchanged, or the open transaction
        rolled back."""
        if self.txn:
            try:
                return run_duckdb(self.con, rec)
            finally:
                self.rollback()
        self.con.execute("begin")
        try:
            return run_duckdb(self.con, rec)
        finally:
            self.con.execute("rollback")


def check(session, rec):
    """(status, detail): status ok / close / DIFFERS."""
    con = session.con
    ctl = txn_control(rec)
    if ctl is not None and rec.kind in ("ok", "count"):
        if ctl == "begin" and not session.txn:
            con.execute("begin")
            session.txn = True
        elif ctl == "commit" and session.txn:
            session.txn = False
            con.execute("commit")
        elif ctl == "rollback":
            session.rollback()
        if rec.kind == "count" and rec.count != 0:
            return "DIFFERS", "expected count %d; the runner answers 0" % rec.count
        return "ok", ""
    if rec.kind == "error":
        try:
            types, rows, _ = session.run_rejected(rec)
        except (duckdb.Error, ValueError) as e:
            if "Resource In Use" in str(e):  # the checker's fault, not the statement's
                raise
            return "ok", "DuckDB rejects it too: %s" % str(e).split("\n")[0]
        shown = " | ".join(" ".join(cell(v, t) for v, t in zip(r, types)) for r in rows[:3])
        return "DIFFERS", "expected an error (%s); DuckDB answers %s (undone)" % (
            rec.error, shown or "no rows")
    try:
        types, rows, columns = session.run(rec)
    except (duckdb.Error, ValueError) as e:
        return "DIFFERS", "DuckDB fails: %s" % str(e).split("\n")[0]
    if rec.kind == "ok":
        return "ok", ""
    if rec.kind == "count":
        # DuckDB answers a write with one row of its count (column "Count"), and DDL
        # with no row (or nothing): the runner's 0.
        if columns == ["Count"] and len(rows) <= 1:
            n = rows[0][0] if rows else 0
        elif not columns:
            n = 0
        else:
            return "DIFFERS", "expected count %d; DuckDB answers rows %s" % (rec.count, rows[:3])
        if n == rec.count:
            return "ok", ""
        return "DIFFERS", "expected count %d; DuckDB %d" % (rec.count, n)
    letters = "".join(type_letter(t) for t in types)
    rows, cell_types = sort_rows(rows, types, rec.sort)
    if rec.sort == "valuesort":
        # valuesort: one value a row; a row's type is its value's column's type.
        got = [[(tok, False) for tok in cell(r[0], t).split()] for r, t in zip(rows, cell_types)]
        alt = [[(tok, t in ("DOUBLE", "FLOAT")) for tok in cell(r[0], t).split()]
               for r, t in zip(rows, cell_types)]
    else:
        got = [[(tok, False) for tok, _ in line] for line in tokens(rows, types, False)]
        alt = tokens(rows, types, True)
    want = [normalize(l) for l in rec.expected]
    got_text = [" ".join(tok for tok, _ in line) for line in got]
    type_note = "" if letters == rec.types else " [types: expected %s, DuckDB %s (%s)]" % (
        rec.types, letters, ", ".join(types))
    if got_text == want and not type_note:
        return "ok", ""
    detail = "expected %s; DuckDB %s%s" % (want, got_text, type_note)
    if not type_note and close_enough(alt, want):
        return "close", detail
    return "DIFFERS", detail


def known(rec, table=None):
    for (f, snippet), why in (KNOWN if table is None else table).items():
        if f == rec.file and snippet in rec.sql and why:
            return why
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="file names under crates/sql/tests/slt (default: all)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    files = [SLT_DIR / f for f in args.files] or sorted(SLT_DIR.glob("*.slt"))
    print("duckdb", duckdb.__version__, "| tpchgen-cli", g.tool_version(g.TPCHGEN))
    counts = {"ok": 0, "pg-note": 0, "adapted": 0, "close": 0, "DIFFERS": 0}
    unexplained = 0
    with tempfile.TemporaryDirectory(prefix="slt-duckdb-") as d:
        data = Path(d) / "tbl"
        data.mkdir()
        g.generate_data(0.01, data)
        mem = g.load(data, 0.01)
        base = Path(d) / "base.duckdb"
        mem.execute("attach '%s' as base" % base)
        mem.execute("copy from database memory to base")
        mem.execute("detach base")
        mem.close()
        for path in files:
            copy = Path(d) / (path.stem + ".duckdb")
            shutil.copy(base, copy)
            con = duckdb.connect(str(copy))
            session = Session(con)
            for rec in parse(path):
                status, detail = check(session, rec)
                if status == "ok" and known(rec, DUCKDB_SQL):
                    status = "adapted"
                    detail = "DuckDB ran %s: %s" % known(rec, DUCKDB_SQL)
                if status == "ok" and known(rec, PG_NOTES):
                    status = "pg-note"
                    detail = known(rec, PG_NOTES)
                counts[status] = counts.get(status, 0) + 1
                first = " ".join(rec.sql.split())[:110]
                if status == "ok" and not args.verbose:
                    continue
                print("%-7s %s  %s" % (status, rec.label(), first))
                if detail:
                    print("        " + detail)
                why = known(rec) if status not in ("pg-note", "adapted") else None
                if why:
                    print("        judged: " + why)
                elif status == "DIFFERS":
                    unexplained += 1
                    print("        NOT JUDGED YET")
            con.close()
    print("\n%d ok (%d of them with a pg-note, %d adapted), %d close, %d differ (%d not judged)" % (
        counts["ok"] + counts["pg-note"] + counts["adapted"], counts["pg-note"], counts["adapted"],
        counts["close"],
        counts["DIFFERS"], unexplained))
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()
