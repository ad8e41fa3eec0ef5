#!/usr/bin/env python3
"""The traced program behaves as untraced: signals, forks, spawned children
(runs on CPU, in CI: `--host-allocations=all` traces programs without CUDA).

    process_behaviour_test.py APPTRACER LIBAPPTRACER HOST_APPS_DIR

Each case runs plain and under `apptracer record --host-allocations=all`;
exit code and stdout must be the same, and the traces must say what happened.
"""
import os
import signal
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

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

# A crash: the program's own SIGSEGV handler (faulthandler here) still runs,
# and the process still dies by the signal, after the tracer's flush.
CRASH_PROGRAM = """
import ctypes, faulthandler, sys, time
faulthandler.enable()
buffer = bytearray(1 << 20)
print("crashing", flush=True)
ctypes.string_at(0)
"""

# A crash in the tracer's own code: the program hands the interposed
# sigaction a bad address to put the old action at, which the tracer writes.
OWN_CRASH_PROGRAM = """
import ctypes, faulthandler
faulthandler.enable()
libc = ctypes.CDLL(None)
libc.sigaction(10, None, ctypes.c_void_p(0x20))
"""

# A signal that ends a program without CUDA (no context ever), at any time
# after it starts: the blocks allocated before it are in the trace, which
# says which signal ended it.
SIGNALLED_PROGRAM = """
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
delay, name = float(sys.argv[1]), sys.argv[2]
number = getattr(signal, name)
signal.signal(signal.SIGINT, signal.SIG_DFL)  # Python's own ends in KeyboardInterrupt
libc.malloc(100 << 10)
time.sleep(delay)
libc.malloc(200 << 10)
if name == "SIGSEGV":
    ctypes.string_at(0)
elif name == "SIGABRT":
    os.abort()
else:
    signal.raise_signal(number)
time.sleep(5)
"""

# The program's own handler decides: this one goes on, and exits normally.
HANDLED_PROGRAM = """
import ctypes, signal
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
for name in ("SIGTERM", "SIGHUP", "SIGUSR1"):
    signal.signal(getattr(signal, name), lambda number, frame: print("handled", number, flush=True))
    signal.raise_signal(getattr(signal, name))
libc.malloc(300 << 10)
print("went on", signal.getsignal(signal.SIGPIPE), signal.getsignal(signal.SIGQUIT))
"""


def check_sigint(c, apptracer):
    _, states = python_case(c, apptracer, "SIGINT raises KeyboardInterrupt", SIGINT_PROGRAM, 1)
    c.expect(states and states[0][0] == "complete", f"SIGINT: trace complete ({states})")


def check_multiprocessing(c, apptracer):
    found, states = python_case(c, apptracer, "multiprocessing fork/forkserver/spawn pools",
                                MULTIPROCESSING_PROGRAM)
    c.expect(0 < len(found) < 60, f"multiprocessing: one trace per process, no respawn storm ({len(found)})")
    # Every worker (forked, forkserver's, spawned) carries the tracer's
    # handlers: each trace ends complete, or says the pool's SIGTERM ended it,
    # even when the signal came while the worker was writing its trace's end.
    c.expect(states and all(s in (("complete", None), ("incomplete", "signal 15")) for s in states),
             f"multiprocessing: every trace ends complete or by signal 15 ({states})")


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
    c.expect(states == [("incomplete", "signal 15")], f"early SIGTERM: an incomplete trace ({states})")


def check_crash(c, apptracer):
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as out:
        program = script(CRASH_PROGRAM, scratch)
        plain = run(program)
        traced = record(apptracer, out, program)
        c.expect(traced.returncode == plain.returncode,
                 f"crash: same exit ({traced.returncode} == {plain.returncode})")
        c.expect("Fatal Python error" in traced.stderr, "crash: the program's faulthandler still ran")
        c.expect("apptracer's own code" not in traced.stderr,
                 "crash: the program's crash is not called the tracer's")
        found = traces(out)
        states = [(meta(t, "status"), meta(t, "end_reason")) for t in found]
        c.expect(states == [("incomplete", "signal 11")], f"crash: the trace is incomplete ({states})")


def check_own_crash(c, apptracer):
    """A fault in the tracer's own code is called the tracer's, first; the
    program's handler still runs and the trace is still written."""
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as out:
        program = script(OWN_CRASH_PROGRAM, scratch)
        traced = record(apptracer, out, program)
        c.expect(traced.returncode == -signal.SIGSEGV, f"own crash: a SIGSEGV ({traced.returncode})")
        blamed = re.search(r"apptracer: SIGSEGV in apptracer's own code \(libapptracer\.so\+0x[0-9a-f]+\)",
                           traced.stderr)
        c.expect(blamed is not None, f"own crash: the tracer says the crash is its own: {traced.stderr[-400:]!r}")
        c.expect(blamed is None or blamed.start() < traced.stderr.find("Fatal Python error"),
                 "own crash: said before the program's handler speaks")
        states = [(meta(t, "status"), meta(t, "end_reason")) for t in traces(out)]
        c.expect(states == [("incomplete", "signal 11")], f"own crash: the trace is incomplete ({states})")


def block_sizes(path, sizes):
    """Which of `sizes` the trace holds host blocks of."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        marks = ",".join("?" * len(sizes))
        return sorted(b for (b,) in db.execute(f"SELECT bytes FROM allocations WHERE bytes IN ({marks})", sizes))
    except sqlite3.Error:
        return []
    finally:
        db.close()


def check_signals_without_cuda(c, apptracer):
    """Each signal that ends a host-only program, at once and later: the
    program dies of it as untraced, and its trace holds both blocks."""
    with tempfile.TemporaryDirectory() as scratch:
        program = script(SIGNALLED_PROGRAM, scratch)
        for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGSEGV", "SIGABRT"):
            number = getattr(signal, name)
            for delay in ("0", "0.3"):
                with tempfile.TemporaryDirectory() as out:
                    plain = run(program + [delay, name])
                    traced = record(apptracer, out, program + [delay, name])
                    case = f"{name} after {delay} s without CUDA"
                    c.expect(traced.returncode == plain.returncode == -number,
                             f"{case}: dies of it ({traced.returncode}, untraced {plain.returncode})")
                    found = traces(out)
                    states = [(meta(t, "status"), meta(t, "end_reason")) for t in found]
                    c.expect(states == [("incomplete", f"signal {number}")], f"{case}: says so ({states})")
                    blocks = block_sizes(found[0], [100 << 10, 200 << 10]) if found else []
                    c.expect(blocks == [100 << 10, 200 << 10], f"{case}: both blocks in the trace ({blocks})")


def check_signal_while_finishing(c, apptracer, apps, runs=8):
    """SIGTERM while the program exits comes to a thread that holds the
    allocator's lock, which the exiting thread's write of the trace's end
    needs: the signal is held until the write is done, the trace is
    complete, and the program dies of it. (A handler that waited for the
    write on that thread held the lock 5 s and died with the trace's end
    unwritten, 1 run in 3.)"""
    program = [os.path.join(apps, "host_signal_while_finishing")]
    outcomes = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out:
            start = time.monotonic()
            traced = record(apptracer, out, program)
            seconds = time.monotonic() - start
            states = [(meta(t, "status"), meta(t, "end_reason")) for t in traces(out)]
            # Under the 5 s a handler waiting for the write took (a loaded
            # machine stretches the 0.1-0.5 s a run takes).
            outcomes.append((traced.returncode, states, seconds < 4.5))
    expected = (-signal.SIGTERM, [("complete", None)], True)
    c.expect(all(o == expected for o in outcomes),
             f"SIGTERM while exiting: {runs} complete traces, each program dead of it within 4.5 s "
             f"({[o for o in outcomes if o != expected][:3]})")
    # The exiting thread itself blocks SIGTERM: the signal held meanwhile
    # still ends the process once the trace's end is written.
    with tempfile.TemporaryDirectory() as out:
        traced = record(apptracer, out, program + ["main-blocks-term"])
        states = [(meta(t, "status"), meta(t, "end_reason")) for t in traces(out)]
        c.expect((traced.returncode, states) == (-signal.SIGTERM, [("complete", None)]),
                 f"SIGTERM while exiting, blocked by the exiting thread: a complete trace, the program dead "
                 f"of it ({traced.returncode}, {states})")


def check_program_handlers(c, apptracer):
    """A program's own handlers run and decide; it sees its dispositions as untraced."""
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as out:
        program = script(HANDLED_PROGRAM, scratch)
        plain = run(program)
        traced = record(apptracer, out, program)
        same_behaviour(c, "handled signals", plain, traced)
        found = traces(out)
        states = [(meta(t, "status"), meta(t, "end_reason")) for t in found]
        c.expect(states == [("complete", None)], f"handled signals: the trace is complete ({states})")
        c.expect(found and block_sizes(found[0], [300 << 10]) == [300 << 10],
                 "handled signals: the block after them is in the trace")


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


def check_hand_set_force(c, library):
    """APPTRACER_FORCE=1 set by hand removes the trace at the output path
    resolved where the run started, and nothing else: not a file of the same
    name in the directory a process of the run execs in (bash execs with its
    own copy of the environment, which the tracer's setenv does not reach)."""
    for how in ("exec", "fork and exec"):
        with tempfile.TemporaryDirectory() as work:
            other = os.path.join(work, "other")
            os.mkdir(other)
            for directory, text in ((work, "the old trace"), (other, "someone's notes")):
                with open(os.path.join(directory, "t.db"), "w") as f:
                    f.write(text)
            command = "cd other && " + ("exec " if how == "exec" else "") + f"{PYTHON} -c 'bytearray(1 << 20)'"
            env = dict(os.environ, APPTRACER_OUTPUT="t.db", APPTRACER_FORCE="1",
                       APPTRACER_HOST_ALLOCATIONS="all", LD_PRELOAD=library)
            ran = run(["bash", "-c", command], cwd=work, env=env)
            c.expect(ran.returncode == 0, f"hand-set force, {how}: runs ({ran.stderr.strip()[-300:]})")
            with open(os.path.join(other, "t.db"), "rb") as f:
                kept = f.read()
            c.expect(kept == b"someone's notes" and os.listdir(other) == ["t.db"],
                     f"hand-set force, {how}: another directory's t.db untouched ({kept!r}, {os.listdir(other)})")
            with open(os.path.join(work, "t.db"), "rb") as f:
                replaced = f.read(15)
            c.expect(replaced == b"SQLite format 3", f"hand-set force, {how}: the old trace replaced ({replaced!r})")


def main():
    apptracer, library, apps = sys.argv[1:4]
    c = Checks()
    check_sigint(c, apptracer)
    check_multiprocessing(c, apptracer)
    check_subprocess(c, apptracer)
    check_finish_costs(c, apptracer)
    check_early_sigterm(c, apptracer)
    check_crash(c, apptracer)
    check_own_crash(c, apptracer)
    check_signals_without_cuda(c, apptracer)
    check_signal_while_finishing(c, apptracer, apps)
    check_program_handlers(c, apptracer)
    check_hand_set_force(c, library)
    check_shell_forks(c, apptracer)
    check_shell_pipelines(c, apptracer)
    if c.failures:
        print(f"process_behaviour: {len(c.failures)} FAILED")
        return 1
    print("process_behaviour: all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
