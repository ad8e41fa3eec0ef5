#!/usr/bin/env python3
"""`apptracer record` on CPU: the program's exit status passes through, the
traces a run writes are named, an existing trace is never overwritten without
--force, and a missing program is one clear line.

    record_test.py APPTRACER
"""
import os
import subprocess
import sys
import tempfile


def record(apptracer, *args):
    return subprocess.run([apptracer, "record", *args], capture_output=True, text=True, timeout=60)


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

    # Framework allocators: the Python bootstrap beside the library goes on
    # PYTHONPATH (before what was there), the mode in the environment;
    # per-buffer makes JAX allocate each buffer through CUDA; off sets nothing.
    show = 'echo "$PYTHONPATH|$APPTRACER_FRAMEWORK_ALLOCATORS|$XLA_PYTHON_CLIENT_ALLOCATOR"'
    env = dict(os.environ, PYTHONPATH="/theirs")
    for mode, bootstrap, xla in (("hooks", True, ""), ("per-buffer", True, "platform"),
                                 ("off", False, "")):
        run = subprocess.run([apptracer, "record", "--framework-allocators", mode, "-o",
                              os.path.join(work, "f-%p.db"), "--", "sh", "-c", show],
                             capture_output=True, text=True, timeout=60, env=env)
        path, seen_mode, seen_xla = (run.stdout.strip().split("|") + ["", "", ""])[:3]
        entries = path.split(":")
        has_bootstrap = (entries[0].endswith("/apptracer-python") and
                         os.path.exists(os.path.join(entries[0], "sitecustomize.py")))
        expect(run.returncode == 0 and has_bootstrap == bootstrap and entries[-1] == "/theirs",
               f"{mode}: PYTHONPATH {path!r}")
        expect((seen_mode, seen_xla) == (mode, xla), f"{mode}: environment {run.stdout!r}")
    run = record(apptracer, "--framework-allocators", "sometimes", "--", "true")
    expect(run.returncode != 0 and "framework-allocators" in run.stderr,
           f"an unknown mode is refused: {run.stderr!r}")

    for f in failures:
        print("FAIL", f)
    print("record: ok" if not failures else "record: FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
