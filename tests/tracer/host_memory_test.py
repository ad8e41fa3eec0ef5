#!/usr/bin/env python3
"""Host memory capture on programs without CUDA (runs on CPU, in CI).

    host_memory_test.py APPTRACER APPS_DIR

Each program runs plain and under `apptracer record --host-allocations=all`:
exit code and stdout must be identical, and the trace must hold exactly the
blocks the program allocated at or above the threshold (they have sizes no
runtime uses). Default mode leaves no trace for a program that never uses
CUDA, and `off` none either.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

PAGEABLE_HOST = 7


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures.append(what)


def run(command, env=None, timeout=600):
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def record(apptracer, out_dir, program, mode="all", extra=()):
    return run([apptracer, "record", "-o", os.path.join(out_dir, "t-%p.db"),
                f"--host-allocations={mode}", *extra, "--", *program])


def traces(out_dir):
    return sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith(".db"))


def query(path, sql, *args):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def host_rows(path, low, high):
    """(bytes, flags, freed) of pageable-host rows with low <= bytes < high."""
    return query(path, "SELECT bytes, flags, free_ns IS NOT NULL FROM allocations"
                       " WHERE kind = ? AND bytes >= ? AND bytes < ? ORDER BY bytes",
                 PAGEABLE_HOST, low, high)


def same_behaviour(c, name, plain, traced):
    c.expect(traced.returncode == plain.returncode,
             f"{name}: exit code {traced.returncode} == {plain.returncode}")
    c.expect(traced.stdout == plain.stdout, f"{name}: stdout identical ({plain.stdout.strip()!r})")


def check_alloc_functions(c, apptracer, apps):
    program = [os.path.join(apps, "host_alloc_functions")]
    plain = run(program)
    c.expect(plain.returncode == 0, "alloc_functions runs")
    with tempfile.TemporaryDirectory() as out:
        traced = record(apptracer, out, program)
        same_behaviour(c, "alloc_functions", plain, traced)
        files = traces(out)
        c.expect(len(files) == 1, f"alloc_functions: one trace ({len(files)})")
        if not files:
            return
        t = files[0]
        expected = sorted([(100001, 0, 1), (100002, 0, 1), (100003, 0, 1), (200003, 0, 1),
                           (100004, 0, 1), (100096, 0, 1), (100005, 0, 1), (100006, 0, 1),
                           (100007, 0, 1), (101000, 0, 1), (100008, 1, 1), (100010, 0, 1),
                           (100009, 0, 0)])
        c.expect(host_rows(t, 100000, 300000) == expected,
                 f"alloc_functions: one row per function, mmap flagged, the leak live:"
                 f" {host_rows(t, 100000, 300000)}")
        c.expect(host_rows(t, 4095, 4096) == [], "alloc_functions: a 4095-byte block is no row")
        meta = dict(query(t, "SELECT key, value FROM meta"))
        classes = {h["min_bytes"]: h for h in json.loads(meta.get("host_alloc_histogram", "[]"))}
        c.expect(classes.get(16, {}).get("count", 0) >= 1000,
                 "alloc_functions: 1000 24-byte blocks counted in the 16..31 class")
        rows = query(t, "SELECT count(*) FROM allocations WHERE kind = ?", PAGEABLE_HOST)[0][0]
        c.expect(meta.get("host_blocks_stored") == str(rows),
                 f"alloc_functions: meta.host_blocks_stored = rows ({rows})")
        c.expect(meta.get("status") == "complete", "alloc_functions: trace complete")
        tids = query(t, "SELECT DISTINCT alloc_tid FROM allocations")
        c.expect(len(tids) == 1 and tids[0][0] > 0, "alloc_functions: allocating thread recorded")
    for mode in ("touched", "off"):
        with tempfile.TemporaryDirectory() as out:
            traced = record(apptracer, out, program, mode)
            same_behaviour(c, f"alloc_functions --host-allocations={mode}", plain, traced)
            c.expect(traces(out) == [], f"alloc_functions --host-allocations={mode}: no trace")
    with tempfile.TemporaryDirectory() as out:
        record(apptracer, out, program, "all", ["--host-min-bytes", "150000"])
        files = traces(out)
        c.expect(bool(files) and host_rows(files[0], 0, 1 << 40) == [(200003, 0, 1)],
                 "alloc_functions --host-min-bytes=150000: only the 200003-byte block")


HOST_ALLOCATE = 4  # tracer_site


def stretch_totals(files, site):
    """A site's timed calls over the tracer_time rows, and their sample_every values."""
    if not files:
        return 0, set()
    rows = query(files[0], "SELECT timed_calls, sample_every FROM tracer_time WHERE site = ?", site)
    return sum(r[0] for r in rows), {r[1] for r in rows}


def check_self_cost(c, apptracer, apps):
    """--self-cost: the tracer's own time per site, in meta self_cost; none without it."""
    program = [os.path.join(apps, "host_alloc_functions")]
    with tempfile.TemporaryDirectory() as out:
        record(apptracer, out, program, "all", ["--self-cost"])
        files = traces(out)
        meta = dict(query(files[0], "SELECT key, value FROM meta")) if files else {}
        cost = json.loads(meta.get("self_cost", "{}"))
        rows = query(files[0], "SELECT count(*) FROM allocations")[0][0] if files else 0
        allocate, free, append = (cost.get(site, {}) for site in ("host_allocate", "host_free", "record_append"))
        c.expect(allocate.get("calls", 0) >= 1000 and allocate.get("ns", 0) > 0,
                 f"self-cost: every malloc family call of the program timed (1000 small blocks too): {allocate}")
        c.expect(free.get("calls", 0) >= 12, f"self-cost: the frees of tracked blocks timed: {free}")
        c.expect(append.get("calls", 0) >= rows > 0, f"self-cost: each stored row's record queued ({rows} rows): {append}")
        # The writer thread of so short a program may not have run yet (the
        # final write is on the exiting thread): its time is there, maybe 0.
        c.expect(cost.get("writer_cpu_ns", -1) >= 0 and 0 < cost.get("timer_ns", 0) < 10_000,
                 f"self-cost: the writer's CPU time, and what one timing costs "
                 f"({cost.get('writer_cpu_ns')}, {cost.get('timer_ns')} ns)")
        usage = [cost.get(f"writer_{key}", -1) for key in
                 ("user_ns", "system_ns", "minor_faults", "voluntary_switches", "involuntary_switches")]
        c.expect(min(usage) >= 0 and usage[0] + usage[1] <= cost.get("writer_cpu_ns", 0) + 20_000_000,
                 f"self-cost: the writer's CPU split into user and system time, its faults and "
                 f"switches: {usage} of {cost.get('writer_cpu_ns')} ns")
        # Its insert thread ran no batch if no table filled one: 0 is allowed.
        c.expect(cost.get("inserter_cpu_ns", -1) >= 0 and
                 cost.get("inserter_user_ns", -1) + cost.get("inserter_system_ns", -1) <=
                 cost.get("inserter_cpu_ns", 0) + 20_000_000,
                 f"self-cost: the insert thread's CPU, split likewise "
                 f"({cost.get('inserter_cpu_ns')}, {cost.get('inserter_user_ns')} user)")
        written, commits = cost.get("writer_allocations", {}), cost.get("writer_commit", {})
        c.expect(written.get("calls", 0) >= 1 and commits.get("calls", 0) >= 1,
                 f"self-cost: the writer's time by what it wrote: {written}, {commits}")
        c.expect("self_cost=1" in meta.get("options", ""), "self-cost: in meta options")
        timed, every = stretch_totals(files, HOST_ALLOCATE)
        c.expect(every == {1} and 0.9 * allocate.get("calls", 0) <= timed <= allocate.get("calls", 0),
                 f"self-cost: tracer_time holds every malloc call timed, stretch by stretch "
                 f"({timed} of {allocate.get('calls')}, sample_every {every})")
    with tempfile.TemporaryDirectory() as out:
        record(apptracer, out, program, "all")
        files = traces(out)
        c.expect(bool(files) and not query(files[0], "SELECT 1 FROM meta WHERE key = 'self_cost'"),
                 "self-cost: off by default")
        # By default about one call in 32 is timed, at random intervals.
        meta = dict(query(files[0], "SELECT key, value FROM meta")) if files else {}
        calls = sum(size["count"] for size in json.loads(meta.get("host_alloc_histogram", "[]")))
        timed, every = stretch_totals(files, HOST_ALLOCATE)
        c.expect(every == {32} and calls / 64 <= timed <= calls / 16,
                 f"tracer_time by default: malloc calls sampled about 1 in 32 ({timed} of {calls} timed, "
                 f"sample_every {every})")
        clock = int(meta.get("tracer_time_clock_ns", "-1"))
        c.expect(0 < clock < 5_000, f"tracer_time: one clock read's cost in meta ({clock} ns)")


def check_stress(c, apptracer, apps):
    program = [os.path.join(apps, "host_alloc_stress"), "4", "2500000"]
    plain = run(program)
    c.expect(plain.returncode == 0, f"alloc_stress runs clean: {plain.stdout.strip()}")
    with tempfile.TemporaryDirectory() as out:
        traced = record(apptracer, out, program)
        same_behaviour(c, "alloc_stress (4 threads, 10M operations)", plain, traced)
        files = traces(out)
        if len(files) != 1:
            c.expect(False, f"alloc_stress: one trace ({len(files)})")
            return
        large = int(plain.stdout.split()[3])
        rows = query(files[0], "SELECT count(*), sum(free_ns IS NOT NULL), count(DISTINCT alloc_tid)"
                               " FROM allocations WHERE kind = ? AND bytes >= 1000000"
                               " AND bytes < 1100000", PAGEABLE_HOST)[0]
        c.expect(rows[0] == large, f"alloc_stress: one row per large block ({rows[0]} == {large})")
        c.expect(rows[1] == large, f"alloc_stress: every large block freed ({rows[1]})")
        c.expect(rows[2] == 4, f"alloc_stress: blocks from 4 threads ({rows[2]})")
        meta = dict(query(files[0], "SELECT key, value FROM meta"))
        counted = sum(h["count"] for h in json.loads(meta["host_alloc_histogram"]))
        c.expect(counted >= 10_000_000, f"alloc_stress: histogram counts every allocation ({counted})")


def check_fork_exec(c, apptracer, apps):
    program = [os.path.join(apps, "host_fork_exec")]
    plain = run(program)
    with tempfile.TemporaryDirectory() as out:
        traced = record(apptracer, out, program)
        same_behaviour(c, "fork_exec", plain, traced)
        files = traces(out)
        c.expect(len(files) == 3, f"fork_exec: parent, forked child, exec'd child ({len(files)})")
        blocks = sorted(tuple(b for b, _, _ in host_rows(f, 300000, 300010)) for f in files)
        c.expect(blocks == [(300001,), (300002,), (300003,)],
                 f"fork_exec: each process holds its own block only: {blocks}")
        modes = [dict(query(f, "SELECT key, value FROM meta")).get("host_allocations") for f in files]
        c.expect(modes == ["all"] * 3, f"fork_exec: every trace says its host-allocation mode: {modes}")


def check_fork_while_allocating(c, apptracer, apps):
    """fork() while threads allocate waits for the writer at most a slice of
    its work, never a whole pass (it waited up to ~50 s); every child exits
    cleanly and keeps its own complete trace."""
    program = [os.path.join(apps, "host_fork_while_allocating"), "20", "2"]
    with tempfile.TemporaryDirectory() as out:
        traced = record(apptracer, out, program)
        line = next((l for l in traced.stderr.splitlines() if l.startswith("forks ")), "")
        summary = dict(zip(*[iter(line.split())] * 2))
        longest = float(summary.get("longest_fork_ms", "inf"))
        c.expect(traced.returncode == 0 and summary.get("failed") == "0",
                 f"fork while allocating: every child exits cleanly ({traced.stderr.strip()[-300:]})")
        c.expect("is not traced" not in traced.stderr,
                 "fork while allocating: no child left untraced by a fork that waited too long")
        # Bounded by the fork wait (1 s); on a loaded 2-core machine a fork
        # costs tens of milliseconds, never the seconds a writer pass took.
        c.expect(longest < 1000, f"fork while allocating: the longest fork {longest} ms < 1000 ms")
        states = {query(f, "SELECT value FROM meta WHERE key = 'status'")[0][0] for f in traces(out)}
        c.expect(len(traces(out)) == 21 and states == {"complete"},
                 f"fork while allocating: 21 complete traces ({len(traces(out))}, {states})")


def check_numpy(c, apptracer):
    script = ("import numpy as np\n"
              "a = np.arange(1_000_000, dtype=np.float64)\n"
              "b = a * 2\n"
              "print(b.sum(), a[-1])\n")
    program = [sys.executable, "-c", script]
    plain = run(program)
    c.expect(plain.returncode == 0, f"numpy available to {sys.executable}: {plain.stderr.strip()[-200:]}")
    with tempfile.TemporaryDirectory() as out:
        traced = record(apptracer, out, program)
        same_behaviour(c, "python numpy", plain, traced)
        files = traces(out)
        c.expect(len(files) == 1, f"python numpy: one trace ({len(files)})")
        if files:
            arrays = query(files[0], "SELECT count(*) FROM allocations WHERE kind = ? AND bytes = ?",
                           PAGEABLE_HOST, 8_000_000)[0][0]
            c.expect(arrays == 2, f"python numpy: a and b are the two 8,000,000-byte blocks ({arrays})")


def main():
    apptracer, apps = sys.argv[1], sys.argv[2]
    c = Checks()
    check_alloc_functions(c, apptracer, apps)
    check_self_cost(c, apptracer, apps)
    check_stress(c, apptracer, apps)
    check_fork_exec(c, apptracer, apps)
    check_fork_while_allocating(c, apptracer, apps)
    check_numpy(c, apptracer)
    print("host_memory: ok" if not c.failures else f"host_memory: {len(c.failures)} FAILED")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
