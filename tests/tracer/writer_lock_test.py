#!/usr/bin/env python3
"""Another process holds a write lock on a live trace (a reader's BEGIN
IMMEDIATE, an analyzer storing into it): the writer waits for it and goes on,
never holding the program longer than its bounds, and what it could not write
is counted in meta with the reason (runs on CPU: `--host-allocations=all`
traces a program without CUDA).

    writer_lock_test.py APPTRACER
"""
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

BLOCKS = 100_000
BLOCK_BYTES = 12_345  # a size the interpreter itself never asks for

# Allocates when told to (the lock is held by then), then waits to be told to end.
PROGRAM = f"""
import ctypes, sys
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
sys.stdin.readline()
for _ in range({BLOCKS}):
    libc.free(libc.malloc({BLOCK_BYTES}))
print("allocated", flush=True)
sys.stdin.readline()
"""

failures = []


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def trace_began(path):
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return db.execute("SELECT count(*) FROM meta").fetchone()[0] > 0
        finally:
            db.close()
    except sqlite3.Error:
        return False


def contents(path):
    """(meta, host blocks of BLOCK_BYTES) of a trace."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        blocks = db.execute("SELECT count(*) FROM allocations WHERE bytes = ?", (BLOCK_BYTES,)).fetchone()[0]
        return meta, blocks
    finally:
        db.close()


def locked_run(apptracer, work, name, hold_s, end_while_locked, environment=None, end_signal=None):
    """Runs PROGRAM under record while this process holds the trace's write
    lock for `hold_s` seconds from before its allocations; the program is told
    to end after the lock is released, or while it is still held (by closing
    its input, or by `end_signal` sent to record, which passes it on). Gives
    (record's result, seconds from telling the program to end to its end)."""
    trace = os.path.join(work, name + ".db")
    proc = subprocess.Popen([apptracer, "record", "-o", trace, "--host-allocations=all", "--",
                             sys.executable, "-c", PROGRAM],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **(environment or {})))
    began = time.monotonic() + 30
    while time.monotonic() < began and not trace_began(trace):
        time.sleep(0.05)
    lock = sqlite3.connect(trace, isolation_level=None, timeout=30)
    lock.execute("BEGIN IMMEDIATE")
    locked_at = time.monotonic()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    allocated = proc.stdout.readline()
    if end_while_locked:
        ending = time.monotonic()
        if end_signal:
            proc.send_signal(end_signal)
        proc.stdin.close()
        proc.wait(timeout=60)
        ended = time.monotonic() - ending
    time.sleep(max(0.0, locked_at + hold_s - time.monotonic()))
    lock.execute("COMMIT")
    lock.close()
    if not end_while_locked:
        ending = time.monotonic()
        proc.stdin.close()
        proc.wait(timeout=60)
        ended = time.monotonic() - ending
    err = proc.stderr.read()
    expect(allocated == "allocated\n" and proc.returncode == (-end_signal if end_signal else 0),
           f"{name}: the program runs as untraced ({proc.returncode}, {err.strip()[-300:]!r})")
    return trace, err, ended


def check_writer_lock(apptracer, work):
    # Held for longer than SQLite's own 5 s busy wait, while the program
    # allocates: every block is written once the lock is gone.
    trace, err, _ = locked_run(apptracer, work, "waited", 8, False)
    meta, blocks = contents(trace)
    expect(blocks == BLOCKS, f"waited: all {BLOCKS} blocks written ({blocks}; {err.strip()[-300:]!r})")
    expect(meta.get("status") == "complete" and meta.get("dropped_records") == "0" and "gave_up" not in meta,
           f"waited: complete, nothing dropped ({meta.get('status')}, {meta.get('dropped_records')}, "
           f"{meta.get('gave_up')})")
    expect(int(meta.get("writer_lock_wait_ns", "0")) > 1e9, f"waited: the wait is in meta "
           f"({meta.get('writer_lock_wait_ns')})")

    # Too little memory to hold the records meanwhile: producers wait at most
    # APPTRACER_STALL_MS, then drop, and the trace counts what it dropped.
    trace, err, _ = locked_run(apptracer, work, "dropped", 4, False,
                               {"APPTRACER_BUFFER_MB": "1", "APPTRACER_STALL_MS": "1000"})
    meta, blocks = contents(trace)
    dropped = int(meta.get("dropped_records", "0"))
    expect(0 < blocks < BLOCKS and dropped >= BLOCKS - blocks,
           f"dropped: the blocks not written are counted ({blocks} written, {dropped} dropped)")
    expect(int(meta.get("writer_stalls", "0")) > 0 and "no progress" in meta.get("gave_up", ""),
           f"dropped: says why ({meta.get('writer_stalls')}, {meta.get('gave_up')!r})")

    # Held past the program's end: its exit waits at most APPTRACER_STALL_MS
    # for the lock, then says what it could not write.
    trace, err, ended = locked_run(apptracer, work, "past-the-end", 6, True, {"APPTRACER_STALL_MS": "1000"})
    expect(ended < 4, f"past the end: the exit waited {ended:.1f} s for the lock, at most about 1 s")
    expect("past the program's end" in err, f"past the end: says what is not written ({err.strip()[-300:]!r})")

    # SIGTERM while the lock is held: the handler waits its bound for the
    # trace's end, then the program dies of the signal, and one line says the
    # end was not written and what the writer was doing.
    trace, err, ended = locked_run(apptracer, work, "signalled", 8, True, end_signal=signal.SIGTERM)
    expect(ended < 7.5, f"signalled: the program died {ended:.1f} s after the signal (the wait is bounded at 5.2 s)")
    expect("the trace's end was not written within 5200 ms of signal 15 (the writer was waiting for "
           "another process's write lock on the trace)" in err,
           f"signalled: says the end is not written, and why ({err.strip()[-300:]!r})")


def main():
    with tempfile.TemporaryDirectory(prefix="apptracer-lock-") as work:
        check_writer_lock(sys.argv[1], work)
    print("writer_lock: ok" if not failures else f"writer_lock: {len(failures)} FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
