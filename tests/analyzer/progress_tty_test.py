#!/usr/bin/env python3
"""Long commands show their phases on a terminal and nothing in a pipe.

    progress_tty_test.py APPTRACER EXAMPLE_TRACE

`dvdg`, `diagnose` and `report` run on a copy of the trace twice: with
standard error on a pseudo-terminal, where each draws its phases on one
line and erases it before it ends, and with standard error on a pipe, where
they write no progress at all. Standard output is a pipe both times and is
the same both times.
"""
import os
import pty
import shutil
import subprocess
import sys
import tempfile

ERASE = "\r\033[K"
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL", what, flush=True)


def run(args, cwd, on_terminal):
    """Standard output and standard error of `args`, the latter on a pty when asked."""
    if not on_terminal:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120)
        return done.stdout, done.stderr
    leader, follower = pty.openpty()
    with subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=follower) as process:
        os.close(follower)
        err = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the pty's other end closed: the command has ended
                break
            if not chunk:
                break
            err += chunk
        out = process.stdout.read()
        process.wait(timeout=120)
    os.close(leader)
    return out.decode(), err.decode().replace("\r\n", "\n")


def main():
    apptracer, example = sys.argv[1:3]
    commands = {
        "dvdg": (["dvdg", "--no-store"], ["dvdg: reading the operations", "dvdg: building the graph"]),
        "diagnose": (["diagnose"], ["diagnose: reading the trace", "diagnose: building the graph",
                                    "diagnose: rules"]),
        "report": (["report", "-o", "page.html", "--force"],
                   ["report: reading the trace", "report: building the graph", "report: rules",
                    "report: analyses", "report: writing the page"]),
    }
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "trace.db")
        shutil.copy(example, trace)
        for name, (args, phases) in commands.items():
            command = [apptracer, args[0], trace] + args[1:]
            out_tty, err_tty = run(command, work, on_terminal=True)
            out_pipe, err_pipe = run(command, work, on_terminal=False)
            for phase in phases:
                expect(ERASE + phase in err_tty, f"{name} on a terminal shows '{phase}': {err_tty!r}")
            progress_end = err_tty.rfind(ERASE)
            expect(progress_end >= 0 and err_tty[progress_end + len(ERASE):] == err_pipe,
                   f"{name} erases its progress line, then says what the pipe says: "
                   f"{err_tty!r} vs {err_pipe!r}")
            expect("\r" not in err_pipe and "\033" not in err_pipe,
                   f"{name} in a pipe writes no progress: {err_pipe!r}")
            expect(out_tty == out_pipe, f"{name}'s standard output does not depend on the terminal")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("progress on a terminal only: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
