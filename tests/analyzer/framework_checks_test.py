#!/usr/bin/env python3
"""The GPU checks of framework allocators' traces (pytorch_train_step,
cupy_pool, jax_arrays: test_apps/trace_checks/framework_allocators.py) on
CPU, against a fabricated trace with sub-allocations (bench/synthetic_trace.h:
tensors in segments, each kernel's output a new tensor in a reused block)
and its stored DVDG.
Nobody may run the GPU tests for a while: this keeps their SQL in step with
the schema, and shows the versions-bounded-by-writes check passes on a
correct graph and fails on one with a version too many.

    framework_checks_test.py APPTRACER DVDG_BENCH CHECK_TRACE_DIR
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile


def check_framework_checks(base, fa, apptracer, dvdg_bench, work):
    path = os.path.join(work, "tensors.db")
    # Writes the trace and stores its DVDG (dvdg_* tables) in it.
    made = subprocess.run([dvdg_bench, "--kernels", "3000", "--copies", "300", "--sub-allocations",
                           "--trace", path, "--apptracer", apptracer], capture_output=True, text=True)
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    expect(made.returncode == 0, f"dvdg_bench: {made.stdout[-2000:]} {made.stderr[-2000:]}")
    trace = base.Trace(path)
    db = sqlite3.connect(path)

    c = base.Checker("versions")
    fa.check_versions_bounded_by_writes(c, trace, db, base.E.PYTORCH_CACHING)
    expect(c.failures == [], f"a correct graph passes: {c.failures[:3]}")
    # A tensor given one version more than anything wrote: the check says so.
    block, version, value = db.execute(
        "SELECT sub_allocation_id, version, id FROM dvdg_values WHERE sub_allocation_id IS NOT NULL "
        "ORDER BY version DESC LIMIT 1").fetchone()
    columns = [row[1] for row in db.execute("PRAGMA table_info(dvdg_values)") if row[1] != "id"]
    db.execute(f"INSERT INTO dvdg_values ({', '.join(columns)}) SELECT {', '.join(columns)} "
               f"FROM dvdg_values WHERE id = ?", (value,))
    db.execute("UPDATE dvdg_values SET version = ? WHERE id = last_insert_rowid()", (version + 1,))
    c = base.Checker("versions")
    fa.check_versions_bounded_by_writes(c, trace, db, base.E.PYTORCH_CACHING)
    expect(len(c.failures) == 1 and f"({block}, {version + 1}," in c.failures[0],
           f"a version too many fails: {c.failures}")
    db.rollback()

    # Each value's ancestry reaches the op that wrote it and what it read
    # (the last copy to the host: early ones read tensors nothing wrote yet).
    copy = fa.copy_op(db, "m.kind = ? AND m.id = (SELECT max(id) FROM memcpys WHERE kind = ?)",
                      base.E.DTOH, base.E.DTOH)
    expect(copy is not None, "the last DtoH copy is a dvdg op")
    written = fa.written_values(db, copy) if copy else []
    expect(len(written) == 1, f"it writes one value: {written}")
    if written:
        ancestors = fa.ancestor_ops(db, written[0])
        expect(copy in ancestors and len(ancestors) >= 2, f"its ancestry: {sorted(ancestors)}")

    # The framework checks run their queries to the end on a trace that is
    # not theirs: their assertions fail, none of their SQL does.
    tensor = db.execute("SELECT address FROM sub_allocations LIMIT 1").fetchone()[0]
    runs = {
        "pytorch_train_step": (fa.check_pytorch_train_step, {
            "params": {"w": tensor}, "param_bytes": {"w": 1}, "grads": {"w": tensor},
            "input": tensor, "input_bytes": 1, "loss": tensor}),
        "cupy_pool": (fa.check_cupy_pool, {"a": tensor, "b": tensor, "c": tensor, "d": tensor}),
        "jax_arrays": (fa.check_jax_arrays, {"x": tensor, "y": tensor, "z": tensor}),
    }
    for name, (check, facts) in runs.items():
        c = base.Checker(name)
        try:
            check(c, trace, f"{name}: " + json.dumps(facts) + "\n")
        except sqlite3.Error as error:
            failures.append(f"{name}: its SQL fails on the schema: {error}")
        expect(c.failures, f"{name}: its assertions can fail")

    for failure in failures:
        print("FAIL", failure[:600])
    print("framework checks: ok" if not failures else "framework checks: FAILED")
    return 1 if failures else 0


def main():
    apptracer, dvdg_bench, check_dir = sys.argv[1:4]
    sys.path.insert(0, check_dir)
    from trace_checks import base, framework_allocators

    base.APPTRACER = apptracer
    with tempfile.TemporaryDirectory(prefix="apptracer-framework-checks-") as work:
        return check_framework_checks(base, framework_allocators, apptracer, dvdg_bench, work)


if __name__ == "__main__":
    sys.exit(main())
