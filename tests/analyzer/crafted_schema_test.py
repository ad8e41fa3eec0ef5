#!/usr/bin/env python3
"""Crafted schema objects under the names apptracer declares are refused
before anything reads them, by every command.

    crafted_schema_test.py APPTRACER EXAMPLE_TRACE

Reading a declared table runs whatever the file put under its name. Each
mutant is a copy of the example trace with one crafted object: every declared
table (`apptracer schema`) and view in turn replaced by a recursive view
without end (its columns all there), a declared table made a virtual table or
given a costly generated column, a trigger on a declared table (it would run
when `dvdg` stores its graph), a declared name spelled in other case. Every
command (fuzz_test.py's list) must fail at once with one line saying the
trace is not one apptracer wrote, leaving the mutant byte for byte as it was. A recursive
view under a name of the user's own is never read: commands still work.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_test  # noqa: E402  (its command list and checks)

TIMEOUT_S = 20
REFUSED = "not a trace apptracer wrote"
ENDLESS = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)"


def endless_view(name, columns):
    selected = ", ".join(f'x AS "{column}"' for column in columns) or "x"
    return f'CREATE VIEW "{name}" AS {ENDLESS} SELECT {selected} FROM r'


def replace_with_view(name, columns):
    def change(db):
        kind = db.execute("SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE", (name,)).fetchone()
        if kind:
            db.execute(f'DROP {"VIEW" if kind[0] == "view" else "TABLE"} "{name}"')
        db.execute(endless_view(name, columns))
    return change


def mutants(schema, trace_columns):
    """(what, change(db)) for every crafted object."""
    found = []
    for name, table in schema["tables"].items():
        columns = [c["name"] for c in table["columns"]]
        found.append((f"{name} an endless view", replace_with_view(name, columns)))
    for name in schema["views"]:
        found.append((f"view {name} endless", replace_with_view(name, trace_columns.get(name, ["x"]))))
    found.append(("API_CALLS (other case) an endless view",
                  replace_with_view("API_CALLS", schema_columns(schema, "api_calls"))))

    def virtual_strings(db):
        db.execute("DROP TABLE strings")
        db.execute("CREATE VIRTUAL TABLE strings USING fts4(id, text)")
    found.append(("strings a virtual table", virtual_strings))

    def generated_column(db):
        db.execute("ALTER TABLE kernels ADD COLUMN padding TEXT "
                   "GENERATED ALWAYS AS (hex(zeroblob(100000000))) VIRTUAL")
    found.append(("kernels with a costly generated column", generated_column))

    def trigger(db):
        db.execute(f"CREATE TRIGGER endless AFTER INSERT ON meta BEGIN "
                   f"SELECT count(*) FROM ({ENDLESS} SELECT x FROM r); END")
    found.append(("a trigger on meta", trigger))
    return found


def schema_columns(schema, table):
    return [c["name"] for c in schema["tables"][table]["columns"]]


def main():
    apptracer, example = sys.argv[1], sys.argv[2]
    schema = json.loads(subprocess.run([apptracer, "schema", "--format", "json"], capture_output=True,
                                       text=True, check=True).stdout)
    with sqlite3.connect(example) as db:
        trace_columns = {name: [r[1] for r in db.execute(f"PRAGMA table_info('{name}')")]
                         for name in schema["views"]}
    fuzz_test.TIMEOUT_S = TIMEOUT_S
    failures = []
    runs = 0
    with tempfile.TemporaryDirectory(prefix="apptracer-crafted-") as work:
        fuzz_test.write_system_file(work)
        original = os.path.join(work, "original.db")
        mutant = os.path.join(work, "mutant.db")
        for what, change in mutants(schema, trace_columns):
            shutil.copy(example, original)
            shutil.copy(example, mutant)
            fuzz_test.with_db(mutant, change)
            before, beside = fuzz_test.digest(mutant), fuzz_test.sidecars(mutant)
            for arguments, _ in fuzz_test.commands(mutant, work):
                command = " ".join(a if a != mutant else "MUTANT" for a in arguments)
                try:
                    run = subprocess.run([apptracer, *arguments], capture_output=True, text=True,
                                         errors="replace", timeout=TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    failures.append(f"{what}: '{command}' hung (> {TIMEOUT_S} s)")
                    continue
                runs += 1
                lines = run.stderr.splitlines()
                if run.returncode == 0 or len(lines) != 1 or REFUSED not in lines[0]:
                    failures.append(f"{what}: '{command}' exited {run.returncode}, not refused in one "
                                    f"line: {run.stderr!r}")
                if fuzz_test.digest(mutant) != before or fuzz_test.sidecars(mutant) != beside:
                    failures.append(f"{what}: '{command}' changed the trace or left a file beside it")

        shutil.copy(example, mutant)
        fuzz_test.with_db(mutant, lambda db: db.execute(endless_view("my_notes", ["x"])))
        for arguments in (["info", mutant], ["stats", mutant], ["timeline", mutant, "--force", "-o",
                                                                 os.path.join(work, "out.pftrace")],
                          ["query", mutant, "SELECT count(*) FROM kernels"]):
            run = subprocess.run([apptracer, *arguments], capture_output=True, text=True,
                                 errors="replace", timeout=TIMEOUT_S)
            runs += 1
            if run.returncode != 0:
                failures.append(f"a view of the user's own: '{arguments[0]}' failed: {run.stderr!r}")
    for failure in failures:
        print("FAIL", failure)
    print(f"crafted schema: {runs} runs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
