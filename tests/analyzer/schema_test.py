#!/usr/bin/env python3
"""`apptracer schema` prints the schema the traces describe about themselves:
its tables, columns and enums match, row for row, the schema_columns and
enum_values a schema-3 trace carries (here: one `merge` writes, less the
process_id columns merge adds).

    schema_test.py APPTRACER EXAMPLE_TRACE
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

apptracer, example = sys.argv[1], sys.argv[2]
schema = json.loads(subprocess.run([apptracer, "schema"], check=True, capture_output=True,
                                   text=True).stdout)
failures = []

with tempfile.TemporaryDirectory() as directory:
    merged = os.path.join(directory, "merged.db")
    subprocess.run([apptracer, "merge", "-o", merged, example], check=True, capture_output=True)
    db = sqlite3.connect(merged)
    described = {}
    for table, column, role, target, sql_type in db.execute(
            "SELECT table_name, column_name, role, target, type FROM schema_columns "
            "ORDER BY table_name, position"):
        # merge adds process_id to every per-process table; it is not declared.
        if role != "process":
            described.setdefault(table, []).append((column, role, target, sql_type))
    enum_rows = {(e, str(v), n) for e, v, n in db.execute("SELECT enum, value, name FROM enum_values")}

for table, columns in described.items():
    printed = [(c["name"], c["role"], c["target"], c["type"])
               for c in schema["tables"].get(table, {}).get("columns", [])]
    if printed != columns:
        failures.append(f"{table}: schema prints {printed}, the trace says {columns}")
printed_enums = {(e, v, n) for e, values in schema["enums"].items() for v, n in values.items()}
if printed_enums != enum_rows:
    failures.append(f"enums differ: {sorted(printed_enums ^ enum_rows)[:5]}")
if len(described) < 20 or "kernel_args" not in schema["views"]:
    failures.append(f"too little compared: {len(described)} tables, views {list(schema['views'])}")
if schema["schema_version"] < 3:
    failures.append(f"schema_version {schema['schema_version']}")

for failure in failures:
    print("FAIL", failure)
print("schema: %d tables compared, %s" % (len(described), "FAILED" if failures else "ok"))
sys.exit(1 if failures else 0)
