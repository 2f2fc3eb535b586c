"""Reads Parquet tables with DuckDB and with polars and checks each against
the CSV the same tool wrote in the same run (docs/formats.md#parquet-tables):
the same column names in the same order, the expected type per column, the
same rows and values, zstd pages and dictionary-encoded string columns.

Input (stdin): a JSON list of tables
  {"name", "csv", "parquet", "min_rows", "types": [[column, TYPE], ...]}
with TYPE one of BIGINT, DOUBLE, VARCHAR, BOOLEAN (DuckDB's names).
Output: one line `ok READER NAME ROWS` per table and reader; the problems,
if any, on stderr and exit 1. A missing package: its install command on
stderr and exit 2. Run by tests/tests/parquet_tables.rs.
"""

import csv
import json
import math
import sys

missing = []
try:
    import duckdb
except ImportError:
    missing.append("duckdb")
try:
    import polars as pl
except ImportError:
    missing.append("polars")
if missing:
    names = " ".join(missing)
    sys.stderr.write(
        f"the Python package(s) {names} missing: python3 -m pip install --user {names} "
        "(scripts/test.sh installs them)\n"
    )
    sys.exit(2)

# polars' dtype names (`str(dtype)`) as DuckDB's.
POLARS_TYPES = {
    "Int64": "BIGINT",
    "Float64": "DOUBLE",
    "String": "VARCHAR",
    "Utf8": "VARCHAR",
    "Boolean": "BOOLEAN",
}
TRUE = {"true", "yes", "1"}
FALSE = {"false", "no", "0"}


def same(ty, text, value):
    """Whether the Parquet `value` (as a reader returns it) is the CSV
    field `text` read as `ty`; an empty field is a null (or, in a string
    column that is not nullable, the empty string)."""
    if text == "":
        return value is None or (ty == "VARCHAR" and value == "")
    if value is None:
        return False
    if ty == "BIGINT":
        return isinstance(value, int) and not isinstance(value, bool) and int(text) == value
    if ty == "DOUBLE":
        want = float(text)
        if not isinstance(value, float):
            return False
        return value == want or (math.isnan(value) and math.isnan(want))
    if ty == "BOOLEAN":
        low = text.lower()
        return isinstance(value, bool) and (
            (low in TRUE and value) or (low in FALSE and not value)
        )
    return value == text


def compare(reader, table, columns, types, rows, problems):
    name = table["name"]
    before = len(problems)
    want_cols = [c for c, _ in table["types"]]
    with open(table["csv"], newline="", encoding="utf-8") as f:
        records = list(csv.reader(f))
    header, body = records[0], records[1:]
    if header != want_cols:
        problems.append(f"{name}: CSV header {header} != expected {want_cols}")
        return
    if columns != header:
        problems.append(f"{reader} {name}: Parquet columns {columns} != CSV header {header}")
        return
    for (col, want), got in zip(table["types"], types):
        if got != want:
            problems.append(f"{reader} {name}: column {col} is {got}, expected {want}")
    if len(rows) != len(body):
        problems.append(f"{reader} {name}: {len(rows)} Parquet rows, {len(body)} CSV rows")
        return
    if len(rows) < table["min_rows"]:
        problems.append(f"{name}: {len(rows)} rows, at least {table['min_rows']} expected")
    bad = 0
    for i, (row, rec) in enumerate(zip(rows, body), start=1):
        for (col, ty), value, text in zip(table["types"], row, rec):
            if not same(ty, text, value):
                bad += 1
                if bad <= 5:
                    problems.append(
                        f"{reader} {name} row {i} column {col}: Parquet {value!r}, CSV {text!r}"
                    )
    if bad > 5:
        problems.append(f"{reader} {name}: {bad - 5} more differing values")
    if len(problems) == before:
        print(f"ok {reader} {name} {len(rows)}")


def check_layout(con, table, problems):
    """zstd on every column chunk; string columns dictionary-encoded."""
    name = table["name"]
    meta = con.execute(
        "SELECT path_in_schema, compression, encodings FROM parquet_metadata(?)",
        [table["parquet"]],
    ).fetchall()
    strings = {c for c, t in table["types"] if t == "VARCHAR"}
    for col, compression, encodings in meta:
        if str(compression).upper() != "ZSTD":
            problems.append(f"{name}: column {col} compressed {compression}, not ZSTD")
        if col in strings and "DICTIONARY" not in str(encodings).upper():
            problems.append(f"{name}: string column {col} not dictionary-encoded ({encodings})")


def main():
    tables = json.load(sys.stdin)
    problems = []
    con = duckdb.connect()
    for table in tables:
        path = table["parquet"]
        # DuckDB
        described = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()
        columns = [d[0] for d in described]
        types = [d[1] for d in described]
        rows = con.execute("SELECT * FROM read_parquet(?)", [path]).fetchall()
        sub = []
        compare("duckdb", table, columns, types, rows, sub)
        check_layout(con, table, sub)
        # polars
        df = pl.read_parquet(path)
        ptypes = [POLARS_TYPES.get(str(t), str(t)) for t in df.dtypes]
        compare("polars", table, df.columns, ptypes, df.rows(), sub)
        problems.extend(sub)
    if problems:
        sys.stderr.write("\n".join(problems) + "\n")
        sys.exit(1)


main()
