#!/usr/bin/env python3
"""Fuzzes the analyzer with damaged copies of the bundled traces.

    fuzz_test.py APPTRACER EXAMPLES_DIR [--seed N] [--mutants N] [--seconds S]

First every bundled trace with each extreme value in turn: INT64_MAX,
INT64_MIN, 0 and -1 in every time column and in the ids of the last rows,
every end before its start, spans from INT64_MIN to INT64_MAX, extreme
addresses and sizes; each is also merged before and after the trace it came
from, so its ids collide with the other input's. Then, for the rest of the
time, random mutants: a copy of one of examples/*.db with one mutation: bytes
flipped, the file truncated, a table or column dropped, values replaced by
huge, negative, text, blob or NULL ones, ids made huge, meta's schema version
or status garbled, NOT NULL constraints dropped and columns nulled. Every
command (info, stats, query, timeline, dvdg, merge, diagnose, diff, whatif, report)
runs on each and must not die of a signal, must not take more than
TIMEOUT_S, must fail with exactly one line on stderr, and (the read-only ones)
must leave the mutant byte for byte as it was with no file beside it. Which
columns hold times and ids comes from the trace itself (schema_columns). The
seed makes the random mutants reproducible; a failure prints the seed, the
mutant's number and its mutation, so one run can be replayed:

    fuzz_test.py APPTRACER EXAMPLES_DIR --seed 15 --only 37
"""
import argparse
import hashlib
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 20
HUGE = [2**63 - 1, -(2**63), -1, 0, 2**62, 2**53 + 1]
ODD = ["x", "", "9" * 40, "\n\tline\nbreak", b"\x00\xff", 1e308, -0.0, None]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def sidecars(path):
    return sorted(s for s in ("-wal", "-shm", "-journal") if os.path.exists(path + s))


def tables(db):
    return [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]


def columns(db, table):
    return [r[1] for r in db.execute(f"PRAGMA table_info('{table}')")]


def with_db(path, change):
    db = sqlite3.connect(path, isolation_level=None)
    try:
        return change(db)
    finally:
        db.close()


# Each mutation changes the file at `path` and says what it did.
def flip_bytes(rng, path):
    data = bytearray(open(path, "rb").read())
    count = rng.choice([1, 4, 64, 1024])
    start = rng.choice([0, 100, len(data) // 2])
    for _ in range(count):
        i = rng.randrange(start, len(data))
        data[i] ^= 1 << rng.randrange(8)
    open(path, "wb").write(data)
    return f"flipped {count} bits from byte {start}"


def truncate(rng, path):
    size = os.path.getsize(path)
    keep = rng.choice([0, 10, 100, 4096, rng.randrange(size), size - 1])
    os.truncate(path, keep)
    return f"truncated to {keep} of {size} bytes"


def drop_table(rng, path):
    def change(db):
        name = rng.choice(tables(db) + ["kernel_args"])
        kind = db.execute("SELECT type FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        db.execute(f"DROP {'VIEW' if kind and kind[0] == 'view' else 'TABLE'} IF EXISTS \"{name}\"")
        return f"dropped {name}"
    return with_db(path, change)


def drop_column(rng, path):
    def change(db):
        table = rng.choice(tables(db))
        column = rng.choice(columns(db, table))
        for (index,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND "
                                   "tbl_name = ? AND sql IS NOT NULL", (table,)).fetchall():
            db.execute(f'DROP INDEX "{index}"')
        for (view,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall():
            db.execute(f'DROP VIEW "{view}"')
        try:
            db.execute(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
        except sqlite3.Error as error:  # a primary key: rename it away instead
            db.execute(f'ALTER TABLE "{table}" RENAME COLUMN "{column}" TO "gone_{column}"')
            return f"renamed {table}.{column} ({error})"
        return f"dropped column {table}.{column}"
    return with_db(path, change)


def odd_values(rng, path):
    def change(db):
        table = rng.choice([t for t in tables(db) if t != "sqlite_sequence"])
        column = rng.choice(columns(db, table))
        value = rng.choice(HUGE + ODD)
        where = rng.choice(["", " WHERE rowid % 2 = 0", " WHERE rowid = (SELECT min(rowid) FROM \"%s\")" % table])
        try:
            db.execute(f'UPDATE "{table}" SET "{column}" = ?{where}', (value,))
        except sqlite3.Error as error:
            return f"left {table}.{column} ({error})"
        return f"set {table}.{column} = {value!r}{where}"
    return with_db(path, change)


def huge_ids(rng, path):
    def change(db):
        targets = [("allocations", "id"), ("kernel_arg_words", "alloc_id"), ("kernels", "id"),
                   ("memcpys", "dst_alloc_id"), ("kernels", "arg_set_id"), ("api_calls", "correlation_id"),
                   ("strings", "id"), ("devices", "id")]
        table, column = rng.choice(targets)
        value = rng.choice([2**63 - 1, 2**40, -(2**63), 4_000_000_000])
        try:
            db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = (SELECT max(rowid) FROM "{table}")', (value,))
        except sqlite3.Error as error:
            return f"left {table}.{column} ({error})"
        return f"{table}.{column} of the last row = {value}"
    return with_db(path, change)


def garble_meta(rng, path):
    def change(db):
        key = rng.choice(["schema_version", "status", "pid", "host", "start_ns"])
        value = rng.choice(["-1", "abc", "3x", "1", "2", "999", "", None, "99999999999999999999", 3.5])
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
        return f"meta.{key} = {value!r}"
    return with_db(path, change)


def nulls(rng, path):
    def change(db):
        db.execute("PRAGMA writable_schema = ON")
        db.execute("UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE type = 'table'")
        db.execute("PRAGMA writable_schema = OFF")
        return "NOT NULL dropped"
    described = with_db(path, change)

    def nulled(db):
        table = rng.choice([t for t in tables(db) if t != "sqlite_sequence"])
        column = rng.choice(columns(db, table))
        try:
            db.execute(f'UPDATE "{table}" SET "{column}" = NULL')
        except sqlite3.Error as error:
            return f"{described}; left {table}.{column} ({error})"
        return f"{described}; {table}.{column} all NULL"
    return with_db(path, nulled)


MUTATIONS = [flip_bytes, truncate, drop_table, drop_column, odd_values, huge_ids, garble_meta, nulls]

INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)
EXTREMES = [INT64_MAX, INT64_MIN, 0, -1]
ID_ROLES = ("id", "ref", "correlation", "tid", "stream", "device", "string", "handle")


def columns_with_role(db, *roles):
    """(table, column) of the trace's columns whose role is one of `roles`."""
    return db.execute(
        "SELECT c.table_name, c.column_name FROM schema_columns c JOIN pragma_table_info(c.table_name) p "
        f"ON p.name = c.column_name WHERE c.role IN ({','.join('?' * len(roles))})", roles).fetchall()


def update(db, sql, *parameters):
    try:
        db.execute(sql, parameters)
    except sqlite3.IntegrityError:  # a unique column keeps its values
        pass


def set_each(db, columns, value):
    for table, column in columns:
        update(db, f'UPDATE "{table}" SET "{column}" = ?', value)


# Deterministic mutations with extreme values: (what, change(db)).
def extreme_mutations():
    def every_time(value):
        return lambda db: set_each(db, columns_with_role(db, "time"), value)

    def first_row_times(value):
        def change(db):
            for table, column in columns_with_role(db, "time"):
                update(db, f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = '
                       f'(SELECT min(rowid) FROM "{table}")', value)
        return change

    def ends(change_end):
        def change(db):
            times = columns_with_role(db, "time")
            for table, column in times:
                start = column.replace("end", "start").replace("free_ns", "alloc_ns")
                if start != column and (table, start) in times:
                    update(db, f'UPDATE "{table}" SET "{column}" = {change_end(start)}')
        return change

    def last_ids(value):
        def change(db):
            for table, column in columns_with_role(db, *ID_ROLES):
                update(db, f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = '
                       f'(SELECT max(rowid) FROM "{table}")', value)
        return change

    def full_span(db):
        every_time(INT64_MIN)(db)
        ends(lambda start: str(INT64_MAX))(db)

    def every_extent(value):
        return lambda db: set_each(db, columns_with_role(db, "address", "bytes"), value)

    mutations = [(f"every time = {v}", every_time(v)) for v in EXTREMES]
    mutations += [(f"first rows' times = {v}", first_row_times(v)) for v in (INT64_MAX, INT64_MIN)]
    mutations.append(("every end 1 ms before its start", ends(lambda start: f'"{start}" - 1000000')))
    mutations.append(("every time INT64_MIN, every end INT64_MAX", full_span))
    mutations += [(f"last rows' ids = {v}", last_ids(v)) for v in EXTREMES]
    mutations += [(f"every address and size = {v}", every_extent(v)) for v in (INT64_MAX, INT64_MIN, -1)]
    return mutations


SYSTEM_FILE = """{"format": "apptracer system", "version": 1,
 "machine": {"hostname": "fuzz", "gpus": [{"ordinal": 0, "name": "NVIDIA H100", "numa_node": 0}]},
 "paths": [%s]}"""
PATH = '{"name": "%s", "model": {"latency_ns": 2000, "bandwidth": [{"bytes": 1, "gbps": 20}]}}'


def write_system_file(work):
    path = os.path.join(work, "system.json")
    names = ["HtoD.pageable.node0.gpu0", "HtoD.pinned.node0.gpu0", "DtoH.pageable.node0.gpu0",
             "DtoH.pinned.node0.gpu0", "DtoD.gpu0"]
    with open(path, "w") as f:
        f.write(SYSTEM_FILE % ", ".join(PATH % name for name in names))
    return path


def commands(mutant, work):
    """(arguments, reads only) for every command on the mutant."""
    original = os.path.join(work, "original.db")
    system = os.path.join(work, "system.json")
    return [
        (["info", mutant], True),
        (["stats", mutant], True),
        (["stats", mutant, "--format", "json", "--report", "um"], True),
        (["query", mutant, "SELECT * FROM kernel_args"], True),
        (["query", mutant, "SELECT count(*), sum(bytes) FROM memcpys", "--format", "csv"], True),
        (["timeline", mutant, "--force", "-o", os.path.join(work, "out.pftrace")], True),
        (["timeline", mutant, "--force", "--format", "chrome-json", "-o", os.path.join(work, "out.json")], True),
        (["dvdg", "--no-store", mutant, "--force", "--json", os.path.join(work, "out.json"), "--dot", "-"], True),
        (["merge", original, mutant, "--force", "-o", os.path.join(work, "merged.db")], True),
        (["merge", mutant, original, "--force", "-o", os.path.join(work, "merged.db")], True),
        (["diagnose", mutant, "--analyses"], True),
        (["diff", original, mutant], True),
        (["diff", mutant, original, "--json"], True),
        (["whatif", mutant, "--system", system, "--overlap", "--pin"], True),
        (["report", mutant, "--system", system, "--force", "-o", os.path.join(work, "out.html")], True),
        (["dvdg", mutant, "--why", "v1"], False),
    ]


def check_commands(apptracer, label, mutant, work, failures):
    """Runs every command on the mutant; returns how many ran."""
    runs = 0
    for arguments, read_only in commands(mutant, work):
        before = digest(mutant)
        beside = sidecars(mutant)
        command = " ".join(a if a != mutant else "MUTANT" for a in arguments)
        try:
            run = subprocess.run([apptracer, *arguments], capture_output=True, text=True,
                                 errors="replace", timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            failures.append(f"{label}: '{command}' hung (> {TIMEOUT_S} s)")
            continue
        runs += 1
        if run.returncode < 0:
            failures.append(f"{label}: '{command}' died of signal {-run.returncode}")
        elif run.returncode != 0:
            lines = run.stderr.splitlines()
            if len(lines) != 1 or not lines[0].startswith("apptracer: "):
                failures.append(f"{label}: '{command}' failed without one line: {run.stderr!r}")
        if read_only and (digest(mutant) != before or sidecars(mutant) != beside):
            failures.append(f"{label}: '{command}' changed the trace or left {sidecars(mutant)}")
    return runs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("apptracer")
    parser.add_argument("examples")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("APPTRACER_FUZZ_SEED", "15")))
    parser.add_argument("--mutants", type=int, default=120)
    parser.add_argument("--seconds", type=float, default=50)
    parser.add_argument("--only", type=int, default=None, help="run only this random mutant")
    args = parser.parse_args()

    traces = sorted(os.path.join(args.examples, f) for f in os.listdir(args.examples) if f.endswith(".db"))
    rng = random.Random(args.seed)
    print(f"fuzz: seed {args.seed}, extreme values, then up to {args.mutants} mutants of "
          f"{len(traces)} traces, {args.seconds:.0f} s in all", flush=True)
    work = tempfile.mkdtemp(prefix="apptracer-fuzz-")
    try:
        failures = []
        runs = extremes = done = 0
        write_system_file(work)
        mutant = os.path.join(work, "mutant.db")
        original = os.path.join(work, "original.db")
        started = time.monotonic()
        for source in traces if args.only is None else []:
            for what, change in extreme_mutations():
                shutil.copy(source, original)
                shutil.copy(source, mutant)
                with_db(mutant, change)
                label = f"extreme values ({os.path.basename(source)}: {what})"
                runs += check_commands(args.apptracer, label, mutant, work, failures)
                extremes += 1
        print(f"fuzz: {extremes} mutants with extreme values in {time.monotonic() - started:.1f} s",
              flush=True)
        deadline = started + args.seconds
        for number in range(args.mutants):
            # Every mutant draws from the one generator, so --only N replays N.
            source = rng.choice(traces)
            mutation = rng.choice(MUTATIONS)
            mutant_rng = random.Random(rng.random())
            if args.only is not None and number != args.only:
                continue
            if time.monotonic() > deadline:
                break
            shutil.copy(source, original)
            shutil.copy(source, mutant)
            try:
                what = mutation(mutant_rng, mutant)
            except sqlite3.Error as error:
                what = f"{mutation.__name__} stopped: {error}"
            label = f"seed {args.seed} mutant {number} ({os.path.basename(source)}: {what})"
            runs += check_commands(args.apptracer, label, mutant, work, failures)
            done += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print("FAIL", failure)
    print(f"fuzz: {extremes} extreme and {done} random mutants, {runs} runs, {len(failures)} failures "
          f"(seed {args.seed})")
    return 1 if failures or extremes + done == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
