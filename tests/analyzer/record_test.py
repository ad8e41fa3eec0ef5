#!/usr/bin/env python3
"""`apptracer record` on CPU: the program's exit status passes through, every
trace the run wrote is listed with its status, each process keeps its own
file even when all share one fixed -o name (with and without --force), an
existing trace is never overwritten without --force, and bad arguments or a
missing program are one clear line, and --exact runs the program once or
twice as it says.

    record_test.py APPTRACER

Programs without CUDA leave traces with --host-allocations=all.
"""
import ctypes
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

LISTED = re.compile(r"^apptracer: trace written to (.*) \((complete|incomplete[^)]*)\)$")
EMPTY = re.compile(r"^apptracer: no trace in (.*) \(empty: the process ended before its trace began; "
                   r"the empty file was removed\)$")


def record(apptracer, *args):
    return subprocess.run([apptracer, "record", *args], capture_output=True, text=True, timeout=60)


def listed(run):
    """(path, status) of every trace record says it wrote."""
    return [LISTED.match(line).groups() for line in run.stderr.splitlines() if LISTED.match(line)]


def db_files(directory):
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".db"))


def process_of(path):
    """(pid, start) of the process image a trace recorded: an exec'd program
    keeps its pid and starts a trace of its own."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('pid', 'start_ns')"))
        return meta.get("pid"), meta.get("start_ns")
    finally:
        db.close()


def gpu_present():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except OSError:
        return False


def check_record(apptracer, work):
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)
            print("FAIL", what, flush=True)

    # The program's exit status passes through; its trace is listed with its status.
    out = os.path.join(work, "status")
    os.mkdir(out)
    run = record(apptracer, "-o", os.path.join(out, "t-%p.db"), "--host-allocations=all", "--",
                 "sh", "-c", "exit 7")
    expect(run.returncode == 7, f"exit status passes through: {run.returncode}")
    expect([p for p, _ in listed(run)] == db_files(out) and len(db_files(out)) == 1,
           f"names the trace it wrote: {run.stderr!r} {db_files(out)}")
    expect(all(s == "complete" for _, s in listed(run)), f"complete: {run.stderr!r}")

    # %h and %% are expanded in what is listed.
    out = os.path.join(work, "expand")
    os.mkdir(out)
    run = record(apptracer, "-o", os.path.join(out, "t-%h-100%%.db"), "--host-allocations=all", "--", "true")
    expected = os.path.join(out, f"t-{os.uname().nodename}-100%.db")
    expect([p for p, _ in listed(run)] == [expected], f"lists {expected}: {run.stderr!r}")

    # Several processes, one fixed name: every process its own file, every file listed.
    for attempt in range(5):
        out = os.path.join(work, f"shared{attempt}")
        os.mkdir(out)
        run = record(apptracer, "-o", os.path.join(out, "same.db"), "--host-allocations=all", "--",
                     "sh", "-c", "ls / | wc -l")
        traces = listed(run)
        files = db_files(out)
        expect(run.returncode == 0 and "locked" not in run.stderr and "already exists" not in run.stderr,
               f"no clash: {run.stderr!r}")
        expect(sorted(p for p, _ in traces) == files and len(files) >= 3,
               f"each of sh, ls, wc has a listed trace: {files} vs {run.stderr!r}")
        expect(all(s == "complete" for _, s in traces), f"all complete: {run.stderr!r}")
        expect(len({process_of(f) for f in files}) == len(files), f"one file per process: {files}")

    # An existing trace is not overwritten without --force...
    existing = os.path.join(work, "existing.db")
    open(existing, "w").write("keep")
    run = record(apptracer, "-o", existing, "--", "true")
    expect(run.returncode == 1 and "use --force" in run.stderr, f"refuses to overwrite: {run.stderr!r}")
    expect(open(existing).read() == "keep", "the existing file is untouched")
    # ...and with it only the first process replaces it; the others get their own names.
    out = os.path.join(work, "forced")
    os.mkdir(out)
    same = os.path.join(out, "same.db")
    open(same, "w").write("old")
    run = record(apptracer, "-f", "-o", same, "--host-allocations=all", "--", "sh", "-c", "ls / | wc -l")
    files = db_files(out)
    expect(open(same, "rb").read(15) == b"SQLite format 3", "the old file was replaced by a trace")
    expect(sorted(p for p, _ in listed(run)) == files and len(files) >= 3,
           f"the others got their own names: {files} {run.stderr!r}")
    expect(len({process_of(f) for f in files}) == len(files), f"nobody replaced another's trace: {files}")

    # Killed by a signal: apptracer dies of the same signal and says what it has.
    for signal_name, script in (("TERM", "kill -TERM $$"), ("KILL", "kill -KILL $$")):
        out = os.path.join(work, f"killed-{signal_name}")
        os.mkdir(out)
        run = record(apptracer, "-o", os.path.join(out, "k-%p.db"), "--host-allocations=all", "--",
                     "sh", "-c", script)
        expect(run.returncode == (-15 if signal_name == "TERM" else -9), f"dies of the program's signal: {run.returncode}")
        said = listed(run) or [l for l in run.stderr.splitlines()
                               if l.startswith("apptracer: no trace written: ") or EMPTY.match(l)]
        expect(bool(said), f"SIG{signal_name} within the first 200 ms: a trace or why not: {run.stderr!r}")
        expect(all(os.path.getsize(f) > 0 for f in db_files(out)), f"no empty file left: {db_files(out)}")

    # Killed where no handler runs, after its trace began: listed as ended
    # before its end was written.
    out = os.path.join(work, "killed-later")
    os.mkdir(out)
    run = record(apptracer, "-o", os.path.join(out, "k.db"), "--host-allocations=all", "--", sys.executable,
                 "-c", "import os, time; time.sleep(0.6); os.kill(os.getpid(), 9)")
    expect(run.returncode == -9 and [s for _, s in listed(run)] ==
           ["incomplete: its process ended before the trace's end was written"],
           f"SIGKILL after the trace began: listed as ended before its end was written: {run.stderr!r}")

    # SIGTERM sent to record itself goes to the program; record lists the
    # trace, then dies of the program's signal.
    out = os.path.join(work, "term-record")
    os.mkdir(out)
    proc = subprocess.Popen([apptracer, "record", "-o", os.path.join(out, "t-%p.db"), "--host-allocations=all",
                             "--", "python3", "-c", "import time; print('ready', flush=True); time.sleep(60)"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = proc.stdout.readline()
    # At once: the tracer's handlers are there from the program's start.
    proc.send_signal(15)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    expect(ready == "ready\n" and proc.returncode == -15, f"SIGTERM to record ends the program: {proc.returncode}")
    statuses = [m.group(2) for m in map(LISTED.match, err.splitlines()) if m]
    expect(statuses == ["incomplete: signal 15"],
           f"SIGTERM to record: the trace listed, ended by the signal, before record dies: {err!r}")

    # A path is listed as it is, whatever bytes it holds, and shown escaped.
    out = os.path.join(work, "odd")
    os.mkdir(out)
    odd = os.path.join(out, "a\nb\x1b[31m.db")
    run = record(apptracer, "-o", odd, "--host-allocations=all", "--", "true")
    shown = odd.replace("\n", "\\n").replace("\x1b", "\\x1b")
    expect(run.returncode == 0 and os.path.exists(odd) and
           run.stderr == f"apptracer: trace written to {shown} (complete)\n",
           f"an odd path listed exactly, escaped: {run.stderr!r}")
    # The tracer's own log lines show it escaped too.
    env = dict(os.environ, APPTRACER_LOG="info")
    run = subprocess.run([apptracer, "record", "-f", "-o", odd, "--host-allocations=all", "--", "true"],
                         capture_output=True, text=True, timeout=60, env=env)
    tracer_lines = [line for line in run.stderr.splitlines() if shown in line and "(complete)" not in line]
    expect(run.returncode == 0 and "\x1b" not in run.stderr and tracer_lines,
           f"the tracer's log lines show the odd path escaped: {run.stderr!r}")

    # A file its process created and never began (a pool worker stopped by
    # SIGTERM at its start: 0 bytes with a journal, or SQLite without a table)
    # is called empty in one line and removed, never "trace written"; one whose
    # process still runs is left alone. The program announces such files the
    # way the tracer does (tracer/base/config.h: path, NUL, pid).
    out = os.path.join(work, "empty")
    os.mkdir(out)
    zero, tableless, running = (os.path.join(out, n) for n in ("zero.db", "tableless.db", "running.db"))
    sleeper = os.path.join(work, "sleeper.pid")

    def make_tableless(path):
        sqlite3.connect(path).execute("PRAGMA journal_mode=WAL").fetchall()

    script = (f": > {zero}; : > {zero}-journal; : > {running}; "
              f"python3 -c \"import sqlite3; sqlite3.connect('{tableless}').execute('PRAGMA journal_mode=WAL')\"; "
              f"sleep 60 > /dev/null 2>&1 & echo $! > {sleeper}; "
              f"printf '%s\\0%s\\n' {zero} 2147483646 > $APPTRACER_RUN_DIR/trace-a; "
              f"printf '%s\\0%s\\n' {tableless} 2147483646 > $APPTRACER_RUN_DIR/trace-b; "
              f"printf '%s\\0%s\\n' {running} $! > $APPTRACER_RUN_DIR/trace-c; exit 3")
    run = record(apptracer, "-o", os.path.join(out, "t-%p.db"), "--", "sh", "-c", script)
    os.kill(int(open(sleeper).read()), 15)
    lines = run.stderr.splitlines()
    expect(run.returncode == 3, f"empty traces: exit status passes through: {run.returncode} {run.stderr!r}")
    expect(sorted(m.group(1) for m in map(EMPTY.match, lines) if m) == sorted([zero, tableless]),
           f"empty traces are called empty: {run.stderr!r}")
    expect(not listed(run), f"an empty file is never 'trace written': {run.stderr!r}")
    expect(os.listdir(out) == ["running.db"], f"empty files removed, a running one kept: {os.listdir(out)}")
    expect(f"apptracer: trace {running} not begun yet: its process " in run.stderr,
           f"a trace not begun by a running process: {run.stderr!r}")
    open(zero, "wb").close()
    make_tableless(tableless)
    for path in (zero, tableless):
        info = subprocess.run([apptracer, "info", path], capture_output=True, text=True, timeout=30)
        expect(info.returncode != 0 and info.stderr ==
               f"apptracer: {path}: empty: the process ended before its trace began\n",
               f"info on an empty trace is one line saying so: {info.stderr!r}")

    # Without CUDA and host recording, no trace and not a word (as untraced).
    run = record(apptracer, "-o", os.path.join(work, "none-%p.db"), "--", "true")
    expect(run.returncode == 0 and "trace written" not in run.stderr, f"quiet: {run.stderr!r}")

    run = record(apptracer, "-o", os.path.join(work, "m-%p.db"), "--", os.path.join(work, "no-such-program"))
    lines = run.stderr.splitlines()
    expect(run.returncode == 127 and len(lines) == 1 and "cannot run" in lines[0],
           f"missing program: {run.returncode} {run.stderr!r}")

    for bad in (["--host-min-bytes", "-5"], ["--host-min-bytes", "lots"], ["--host-allocations", "some"]):
        run = record(apptracer, *bad, "--", "true")
        expect(run.returncode != 0 and len(run.stderr.splitlines()) == 1,
               f"{bad} is one line: {run.returncode} {run.stderr!r}")

    # Framework allocators: the Python bootstrap beside the library goes on
    # PYTHONPATH (before what was there), the mode in the environment;
    # per-buffer makes JAX allocate each buffer through CUDA; off leaves the
    # bootstrap for the framework context alone, and with that off too, sets nothing.
    show = 'echo "$PYTHONPATH|$APPTRACER_FRAMEWORK_ALLOCATORS|$XLA_PYTHON_CLIENT_ALLOCATOR"'
    env = dict(os.environ, PYTHONPATH="/theirs")
    for mode, context, bootstrap, xla in (("hooks", [], True, ""), ("per-buffer", [], True, "platform"),
                                          ("off", [], True, ""),
                                          ("off", ["--framework-context", "off"], False, "")):
        run = subprocess.run([apptracer, "record", "--framework-allocators", mode, *context, "-o",
                              os.path.join(work, "f-%p.db"), "--", "sh", "-c", show],
                             capture_output=True, text=True, timeout=60, env=env)
        path, seen_mode, seen_xla = (run.stdout.strip().split("|") + ["", "", ""])[:3]
        entries = path.split(":")
        has_bootstrap = (entries[0].endswith("/apptracer-python") and
                         os.path.exists(os.path.join(entries[0], "sitecustomize.py")))
        expect(run.returncode == 0 and has_bootstrap == bootstrap and entries[-1] == "/theirs",
               f"{mode}: PYTHONPATH {path!r}")
        expect((seen_mode, seen_xla) == (mode, xla), f"{mode}: environment {run.stdout!r}")
    # --framework-context: the mode in the environment (none: the tracer's
    # default, sampled), and the bootstrap on PYTHONPATH even where the
    # allocators' hooks are off; --level timing records no context unless asked.
    show = 'echo "$PYTHONPATH|$APPTRACER_FRAMEWORK_CONTEXT"'
    for args, context, bootstrap in ((["--framework-context", "sampled"], "sampled", True),
                                     (["--framework-context", "on", "--framework-allocators", "off"], "on", True),
                                     ([], "", True),
                                     (["--level", "timing"], "off", False),
                                     (["--level", "timing", "--framework-context", "modules"], "modules", True)):
        run = subprocess.run([apptracer, "record", *args, "-o", os.path.join(work, "c-%p.db"), "--",
                              "sh", "-c", show], capture_output=True, text=True, timeout=60, env=env)
        path, seen = (run.stdout.strip().split("|") + ["", ""])[:2]
        has_bootstrap = path.split(":")[0].endswith("/apptracer-python")
        expect(run.returncode == 0 and has_bootstrap == bootstrap and seen == context,
               f"{args}: environment {run.stdout!r} {run.stderr!r}")
    run = record(apptracer, "--framework-context", "ops", "--", "true")
    expect(run.returncode != 0 and "framework-context" in run.stderr,
           f"an unknown context mode is refused: {run.stderr!r}")
    run = record(apptracer, "--framework-allocators", "sometimes", "--", "true")
    expect(run.returncode != 0 and "framework-allocators" in run.stderr,
           f"an unknown mode is refused: {run.stderr!r}")

    # --level timing: no launch arguments, host blocks or tensor blocks (no
    # Python bootstrap); it refuses the options it sets itself.
    show = 'echo "$APPTRACER_KERNEL_ARGUMENTS|$APPTRACER_HOST_ALLOCATIONS|$APPTRACER_FRAMEWORK_ALLOCATORS|$PYTHONPATH"'
    run = subprocess.run([apptracer, "record", "--level", "timing", "-o", os.path.join(work, "t-%p.db"), "--",
                          "sh", "-c", show], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH="/theirs"))
    expect(run.returncode == 0 and run.stdout.strip() == "off|off|off|/theirs",
           f"--level timing: environment {run.stdout!r} {run.stderr!r}")
    run = subprocess.run([apptracer, "record", "-o", os.path.join(work, "u-%p.db"), "--", "sh", "-c", show],
                         capture_output=True, text=True, timeout=60)
    expect(run.returncode == 0 and run.stdout.startswith("|touched|hooks|"),
           f"the full level by default: environment {run.stdout!r}")
    run = record(apptracer, "--level", "timing", "--host-allocations", "all", "--", "true")
    expect(run.returncode == 2 and "--host-allocations" in run.stderr and len(run.stderr.splitlines()) == 1,
           f"--level timing with --host-allocations is refused: {run.returncode} {run.stderr!r}")

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
    # A program that changes directory from its first moment: its trace is
    # where record was started, and another directory's file of the same
    # name is never written into (it was: the name was claimed in one
    # directory and opened by SQLite in another).
    for attempt in range(3):
        out = os.path.join(work, f"hopper{attempt}")
        hops = [os.path.join(out, d) for d in ("a", "b")]
        for d in hops:
            os.makedirs(d)
            mine = sqlite3.connect(os.path.join(d, "t.db"))
            mine.execute("CREATE TABLE mine(x)")
            mine.commit()
            mine.close()
        hopper = ("import os, sys, time\n"
                  "a, b = sys.argv[1:3]\n"
                  "keep, end = [], time.time() + 0.5\n"
                  "while time.time() < end:\n"
                  "    os.chdir(a); os.chdir(b)\n"
                  "    keep.append(bytearray(8192))\n"
                  "print('hopped')\n")
        run = subprocess.run([apptracer, "record", "-o", "t.db", "--host-allocations=all", "--",
                              sys.executable, "-c", hopper, *hops],
                             capture_output=True, text=True, timeout=60, cwd=out)
        trace = os.path.join(out, "t.db")
        expect(run.returncode == 0 and run.stdout == "hopped\n", f"hopper runs: {run.stderr!r}")
        expect(listed(run) == [(trace, "complete")], f"hopper: its trace, where record started: {run.stderr!r}")
        for d in hops:
            db = sqlite3.connect(f"file:{os.path.join(d, 't.db')}?mode=ro", uri=True)
            tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            mode = db.execute("PRAGMA journal_mode").fetchone()[0]
            db.close()
            expect(tables == ["mine"] and mode != "wal", f"hopper: {d}/t.db untouched: {tables} {mode}")
            expect(sorted(os.listdir(d)) == ["t.db"], f"hopper: nothing written in {d}: {os.listdir(d)}")

    print("record: ok" if not failures else "record: FAILED")
    return 1 if failures else 0


def main():
    with tempfile.TemporaryDirectory(prefix="apptracer-record-") as work:
        return check_record(sys.argv[1], work)


if __name__ == "__main__":
    sys.exit(main())
