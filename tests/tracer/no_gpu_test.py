#!/usr/bin/env python3
"""Without a GPU the tracer changes nothing but one line on stderr.

    no_gpu_test.py APPTRACER VECTOR_ADD

Runs a CUDA program (which fails for want of a GPU), a program that never
touches CUDA, and a shell running two of those (three processes, as a
launcher script's chain of execs is), each plain and under `apptracer
record`: exit code and stdout must match, stderr may differ by exactly one
apptracer line, and no trace file appears. Exits 77 (skipped) on a machine
that has a GPU.
"""
import ctypes
import os
import subprocess
import sys
import tempfile


def has_gpu():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except OSError:
        return False


def main():
    apptracer, vector_add = sys.argv[1], sys.argv[2]
    if has_gpu():
        print("SKIPPED: this machine has a GPU")
        return 77
    failures = []
    with tempfile.TemporaryDirectory(prefix="apptracer-nogpu-") as out_dir:
        chain = f"'{sys.executable}' -c 'print(1)' && '{sys.executable}' -c 'print(2)'"
        for program in ([vector_add], [sys.executable, "-c", "print(sum(range(10)))"], ["/bin/sh", "-c", chain]):
            plain = subprocess.run(program, capture_output=True, text=True, timeout=60)
            traced = subprocess.run([apptracer, "record", "-o", os.path.join(out_dir, "t-%p.db"), "--"]
                                    + program, capture_output=True, text=True, timeout=60)
            name = os.path.basename(program[-1] if len(program) == 1 else program[0])
            if (traced.returncode, traced.stdout) != (plain.returncode, plain.stdout):
                failures.append(f"{name}: exit/stdout differ: {plain.returncode} vs {traced.returncode}")
            ours = [l for l in traced.stderr.splitlines() if l.startswith("apptracer:")]
            rest = [l for l in traced.stderr.splitlines() if not l.startswith("apptracer:")]
            if len(ours) != 1 or "no CUDA driver" not in ours[0]:
                failures.append(f"{name}: expected one 'no CUDA driver' line, got {ours}")
            if rest != plain.stderr.splitlines():
                failures.append(f"{name}: the program's own stderr changed: {rest} vs {plain.stderr!r}")
        if os.listdir(out_dir):
            failures.append(f"trace files written without a GPU: {os.listdir(out_dir)}")
    for f in failures:
        print("FAIL", f)
    print("no_gpu: ok" if not failures else "no_gpu: FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
