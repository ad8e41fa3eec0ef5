#!/usr/bin/env python3
"""`apptracer record` on CPU: the program's exit status passes through, the
traces a run writes are named, an existing trace is never overwritten without
--force, a missing program is one clear line, and --exact runs the program
once or twice as it says.

    record_test.py APPTRACER
"""
import ctypes
import os
import subprocess
import sys
import tempfile


def record(apptracer, *args):
    return subprocess.run([apptracer, "record", *args], capture_output=True, text=True, timeout=60)


def gpu_present():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except OSError:
        return False


def main():
    apptracer = sys.argv[1]
    work = tempfile.mkdtemp(prefix="apptracer-record-")
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    # A program that "writes a trace" (as the tracer would, by the pattern) and exits 7.
    made = os.path.join(work, "t-4242.db")
    run = record(apptracer, "-o", os.path.join(work, "t-%p.db"), "--", "sh", "-c",
                 f"touch {made}; exit 7")
    expect(run.returncode == 7, f"exit status passes through: {run.returncode}")
    expect(f"apptracer: trace written to {made}" in run.stderr.splitlines(),
           f"names the trace it wrote: {run.stderr!r}")

    # Killed by a signal: apptracer dies of the same signal.
    run = record(apptracer, "-o", os.path.join(work, "k-%p.db"), "--", "sh", "-c", "kill -TERM $$")
    expect(run.returncode == -15, f"dies of the program's signal: {run.returncode}")

    # An existing trace is not overwritten without --force.
    existing = os.path.join(work, "existing.db")
    open(existing, "w").write("keep")
    run = record(apptracer, "-o", existing, "--", "true")
    expect(run.returncode == 2 and "use --force" in run.stderr, f"refuses to overwrite: {run.stderr!r}")
    expect(open(existing).read() == "keep", "the existing file is untouched")

    run = record(apptracer, "-o", os.path.join(work, "m-%p.db"), "--", os.path.join(work, "no-such-program"))
    lines = [l for l in run.stderr.splitlines() if "cannot run" in l]
    expect(run.returncode == 127 and len(lines) == 1, f"missing program: {run.returncode} {run.stderr!r}")

    # --exact, two runs: the program runs normally, then under the sanitizer
    # alone; its exit status is the first run's. A program that launched no
    # kernel needs no join.
    ran = os.path.join(work, "ran")
    run = record(apptracer, "-o", os.path.join(work, "x-%p.db"), "--exact", "--exact-path",
                 "two-run", "--", "sh", "-c", f"echo run >> {ran}; exit 3")
    runs = open(ran).read().count("run") if os.path.exists(ran) else 0
    expect(run.returncode == 3 and runs == 2,
           f"--exact two runs: exit {run.returncode}, ran {runs} times: {run.stderr!r}")
    expect("--exact: two runs (as asked" in run.stderr, f"says how --exact runs: {run.stderr!r}")

    # --exact without a GPU: the probe finds none; one normal run, and it says so.
    if not gpu_present():
        os.remove(ran)
        run = record(apptracer, "-o", os.path.join(work, "y-%p.db"), "--exact", "--", "sh", "-c",
                     f"echo run >> {ran}; exit 4")
        runs = open(ran).read().count("run") if os.path.exists(ran) else 0
        expect(run.returncode == 4 and runs == 1,
               f"--exact without a GPU: exit {run.returncode}, ran {runs} times")
        expect("apptracer: --exact unavailable: no usable GPU; recording in normal mode"
               in run.stderr.splitlines(), f"--exact says it is unavailable: {run.stderr!r}")

    for f in failures:
        print("FAIL", f)
    print("record: ok" if not failures else "record: FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
