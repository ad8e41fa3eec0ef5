#!/usr/bin/env python3
"""The tracer as the process's NVTX tool, end to end on CPU (no CUDA needed).

    nvtx_test.py APPTRACER NVTX_CLIENT

host_nvtx_client builds its NVTX instance as nvtx3 does: under
`apptracer record --host-allocations=all --host-min-bytes=0` (so a trace is
written without CUDA, and every block is a row: a thread whose first record
is an NVTX call used to deadlock there, its first record buffer being a host
block recorded under the buffer pool's lock) it must find the tracer in
NVTX_INJECTION64_PATH and its ranges must be nvtx_ranges rows, nested per
thread. With the variable naming another tool, the tracer leaves it alone,
says so in one line and records no range.
"""
import os
import sqlite3
import subprocess
import sys
import tempfile


def record(apptracer, out_dir, client, env=None):
    return subprocess.run([apptracer, "record", "-o", os.path.join(out_dir, "t-%p.db"),
                           "--host-allocations=all", "--host-min-bytes=0", "--", client],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


def rows(out_dir):
    paths = [os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith(".db")]
    if len(paths) != 1:
        return None
    db = sqlite3.connect(f"file:{paths[0]}?mode=ro", uri=True)
    try:
        return db.execute(
            "SELECT s.text, r.depth, r.end_ns IS NOT NULL, e.name, r.tid FROM nvtx_ranges r "
            "JOIN strings s ON s.id = r.name_id "
            "JOIN enum_values e ON e.enum = 'nvtx_kind' AND e.value = r.kind "
            "ORDER BY s.text").fetchall()
    finally:
        db.close()


def main():
    apptracer, client = sys.argv[1:3]
    failures = []

    def expect(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as out:
        result = record(apptracer, out, client)
        expect(result.returncode == 0, f"traced client exits 0 ({result.stderr.strip()})")
        expect("tool loaded" in result.stdout, "the client found the tracer as its NVTX tool")
        found = rows(out)
        expect(found is not None, "one trace written")
        found = found or []
        main_tid = {tid for name, _, _, _, tid in found if name.startswith("main")}
        worker_tid = {tid for name, _, _, _, tid in found if name.startswith("worker")}
        expect(len(main_tid) == 1 and len(worker_tid) == 1 and main_tid != worker_tid,
               f"each thread's ranges carry its tid: {found}")
        expect([r[:4] for r in found] == [
            ("checkpoint", None, 1, "mark"),
            ("load", None, 1, "start/end"),
            ("main inner", 1, 1, "push/pop"),
            ("main outer", 0, 1, "push/pop"),
            ("worker inner", 1, 1, "push/pop"),
            ("worker outer", 0, 1, "push/pop"),
        ], f"ranges nest per thread, closed, with their kind: {found}")

    with tempfile.TemporaryDirectory() as out:
        result = record(apptracer, out, client, {"NVTX_INJECTION64_PATH": "/nonexistent/other_tool.so"})
        expect(result.returncode == 0, "traced client exits 0 with another tool named")
        expect("tool absent" in result.stdout, "the other tool stays named (it does not load here)")
        said = [l for l in result.stderr.splitlines() if "NVTX_INJECTION64_PATH" in l]
        expect(len(said) == 1, f"one line says NVTX is left to the other tool: {said}")
        expect(rows(out) in (None, []), "no range recorded")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
