#!/usr/bin/env python3
"""The traced program behaves as untraced: signals, forks, spawned children
(runs on CPU, in CI: `--host-allocations=all` traces programs without CUDA).

    process_behaviour_test.py APPTRACER

Each case runs plain and under `apptracer record --host-allocations=all`;
exit code and stdout must be the same, and the traces must say what happened.
"""
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile

PYTHON = sys.executable


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)


def run(command, timeout=120, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)


def record(apptracer, out_dir, program, timeout=120):
    return run([apptracer, "record", "-o", os.path.join(out_dir, "t-%p.db"),
                "--host-allocations=all", "--", *program], timeout=timeout)


def traces(out_dir):
    return sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.endswith(".db"))


def meta(path, key):
    """A meta value; None where the process was killed before its trace began."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None
    except sqlite3.Error:
        return None
    finally:
        db.close()


def same_behaviour(c, name, plain, traced):
    c.expect(traced.returncode == plain.returncode,
             f"{name}: exit code {traced.returncode} == {plain.returncode} ({traced.stderr.strip()[-300:]})")
    c.expect(traced.stdout == plain.stdout, f"{name}: stdout identical ({plain.stdout.strip()!r})")


def script(source, directory):
    """A program as a file: spawn and forkserver children re-import `__main__`."""
    path = os.path.join(directory, "program.py")
    with open(path, "w") as f:
        f.write(source)
    return [PYTHON, path]


def python_case(c, apptracer, name, source, expect_traces=None, exit_code=0):
    """Runs a program plain and traced; gives each trace's command line and (status, end_reason)."""
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as out:
        program = script(source, scratch)
        plain = run(program)
        c.expect(plain.returncode == exit_code, f"{name}: runs untraced ({plain.stderr.strip()[-300:]})")
        traced = record(apptracer, out, program)
        same_behaviour(c, name, plain, traced)
        found = traces(out)
        if expect_traces is not None:
            c.expect(len(found) == expect_traces, f"{name}: {expect_traces} trace(s) ({len(found)})")
        return [meta(t, "command_line") for t in found], [(meta(t, "status"), meta(t, "end_reason")) for t in found]


# Python installs its KeyboardInterrupt handler only where SIGINT is at its
# default when it starts: a tracer that handles SIGINT breaks Ctrl-C.
SIGINT_PROGRAM = """
import os, signal, time
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
    print("not interrupted")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
buffer = bytearray(1 << 20)
"""

# Code that saves and restores handlers (multiprocessing's forkserver) must get
# back what it set, and a pool's workers must start and stop normally.
MULTIPROCESSING_PROGRAM = """
import multiprocessing as mp, signal
def square(x):
    return bytes(1 << 16) and x * x
if __name__ == "__main__":
    for method in ("fork", "forkserver", "spawn"):
        with mp.get_context(method).Pool(2) as pool:
            print(method, sum(pool.map(square, range(20))))
    for s in (signal.SIGTERM, signal.SIGCHLD, signal.SIGSEGV):
        print(signal.getsignal(s))
"""

# A spawned child (subprocess uses vfork + exec) must not end the parent's trace.
SUBPROCESS_PROGRAM = """
import subprocess
subprocess.run(["/bin/true"], check=True)
subprocess.run(["/bin/sh", "-c", "exit 0"], check=True)
buffer = bytearray(3 << 20)
print("after children", len(buffer))
"""

# A program killed by SIGTERM soon after it starts recording: its trace exists
# and says it is incomplete.
EARLY_SIGTERM_PROGRAM = """
import os, signal, time
buffer = bytearray(1 << 20)
time.sleep(0.1)
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(5)
"""

# A crash: the program's own SIGSEGV handler (faulthandler here) still runs
# and the process still dies by the signal. Without CUDA no handler of ours is
# installed (see trace_abort_signal on the GPU for the flush), so the trace
# stays incomplete with what the writer had committed. The program lives a
# second first: on a loaded machine the writer had not yet created the file
# when a program crashing at once died (no trace at all, which is right then).
CRASH_PROGRAM = """
import ctypes, faulthandler, sys, time
faulthandler.enable()
buffer = bytearray(1 << 20)
time.sleep(1)
print("crashing", flush=True)
ctypes.string_at(0)
"""


def check_sigint(c, apptracer):
    _, states = python_case(c, apptracer, "SIGINT raises KeyboardInterrupt", SIGINT_PROGRAM, 1)
    c.expect(states and states[0][0] == "complete", f"SIGINT: trace complete ({states})")


def check_multiprocessing(c, apptracer):
    found, states = python_case(c, apptracer, "multiprocessing fork/forkserver/spawn pools",
                                MULTIPROCESSING_PROGRAM)
    c.expect(0 < len(found) < 60, f"multiprocessing: one trace per process, no respawn storm ({len(found)})")
    # Forked workers (fork and forkserver pools) carry the tracer's handlers:
    # each trace ends complete, or says the pool's SIGTERM ended it, even when
    # the signal came while the worker was writing its trace's end. (Spawned
    # workers have none without CUDA: they install them at their first context.)
    forked = [s for command, s in zip(found, states) if "multiprocessing.spawn" not in (command or "")]
    c.expect(forked and all(s in (("complete", None), ("incomplete", "signal 15")) for s in forked),
             f"multiprocessing: forked workers' traces end complete or by signal 15 ({forked})")


def check_subprocess(c, apptracer):
    found, states = python_case(c, apptracer, "subprocess.run from a traced program", SUBPROCESS_PROGRAM)
    parent = [s for command, s in zip(found, states) if command and command.startswith(PYTHON)]
    c.expect(len(parent) == 1 and parent[0] == ("complete", None),
             f"subprocess: the parent's trace is complete, not ended by a child's exec ({parent})")


def check_finish_costs(c, apptracer):
    """A finished trace says what each step of its finish cost the exiting program."""
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as out:
        traced = record(apptracer, out, script("print(sum(range(10)))\n", scratch))
        c.expect(traced.returncode == 0, f"finish costs: the program runs ({traced.stderr.strip()[-300:]})")
        found = traces(out)
        steps = ("activity", "last_records", "rows_and_indexes", "checkpoint")
        costs = {step: meta(t, f"finish.{step}_ms") for t in found for step in steps}
        c.expect(len(found) == 1 and all(v is not None and v.isdigit() for v in costs.values()),
                 f"finish costs: meta.finish.*_ms in the trace ({costs})")


def check_early_sigterm(c, apptracer):
    found, states = python_case(c, apptracer, "killed by SIGTERM at 100 ms", EARLY_SIGTERM_PROGRAM, 1,
                                -signal.SIGTERM)
    c.expect(states == [("incomplete", None)], f"early SIGTERM: an incomplete trace ({states})")


def check_crash(c, apptracer):
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as out:
        program = script(CRASH_PROGRAM, scratch)
        plain = run(program)
        traced = record(apptracer, out, program)
        c.expect(traced.returncode == plain.returncode,
                 f"crash: same exit ({traced.returncode} == {plain.returncode})")
        c.expect("Fatal Python error" in traced.stderr, "crash: the program's faulthandler still ran")
        found = traces(out)
        states = [(meta(t, "status"), meta(t, "end_reason")) for t in found]
        c.expect(states == [("incomplete", None)], f"crash: the trace is incomplete ({states})")


def check_shell_forks(c, apptracer, runs=20):
    program = ["bash", "-c", "for i in $(seq 30); do x=$(echo $i | cat); done; echo done"]
    hung = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            try:
                traced = record(apptracer, out, program, timeout=60)
                if traced.returncode != 0 or traced.stdout != "done\n":
                    hung += 1
            except subprocess.TimeoutExpired:
                hung += 1
    c.expect(hung == 0, f"a forking shell script: {runs} runs, {hung} hung or failed")


def check_shell_pipelines(c, apptracer, runs=8):
    """A command substitution forks a subshell that forks a pipeline, each
    child rearranging its descriptors while its writer may be opening its
    trace: the shell's output is untouched and every trace is complete."""
    program = ["bash", "-c", "x=$(seq 1 1000 | sort -r | head -3); echo $x; ls / | wc -l"]
    plain = run(program)
    failed, states, leftovers = 0, set(), []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            traced = record(apptracer, out, program, timeout=60)
            # record lists the traces it wrote; nothing else may be added.
            stderr = "".join(line for line in traced.stderr.splitlines(True)
                             if not line.startswith("apptracer: trace written to "))
            if (traced.returncode, traced.stdout, stderr) != (plain.returncode, plain.stdout, plain.stderr):
                failed += 1
                print(traced.stderr.strip()[-300:])
            states |= {meta(t, "status") for t in traces(out)}
            leftovers += [f for f in os.listdir(out) if not f.endswith(".db")]
    c.expect(failed == 0, f"shell pipelines: {runs} runs, {failed} with other output or errors")
    c.expect(states == {"complete"}, f"shell pipelines: every trace complete ({states})")
    c.expect(not leftovers, f"shell pipelines: no -wal, -shm or -journal left ({leftovers[:3]})")


def main():
    apptracer = sys.argv[1]
    c = Checks()
    check_sigint(c, apptracer)
    check_multiprocessing(c, apptracer)
    check_subprocess(c, apptracer)
    check_finish_costs(c, apptracer)
    check_early_sigterm(c, apptracer)
    check_crash(c, apptracer)
    check_shell_forks(c, apptracer)
    check_shell_pipelines(c, apptracer)
    if c.failures:
        print(f"process_behaviour: {len(c.failures)} FAILED")
        return 1
    print("process_behaviour: all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
