#!/usr/bin/env python3
"""Every command of the README's quick start on the bundled traces ("On the
bundled traces, no GPU") runs as written, on copies of examples/*.db, and
succeeds: a newcomer who copies them meets no error.

    quick_start_test.py APPTRACER SOURCE_DIR
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SECTION = "### On the bundled traces, no GPU"
COMMENT = re.compile(r"\s+#.*$")


def quick_start_commands(readme):
    """The `apptracer ...` lines of the section's first shell block, comments dropped."""
    lines = open(readme, encoding="utf-8").read().splitlines()
    start = lines.index(SECTION)
    fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```sh"))
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    return [COMMENT.sub("", line) for line in lines[fence + 1:end] if line.startswith("apptracer ")]


def main():
    apptracer, source = sys.argv[1:3]
    commands = quick_start_commands(os.path.join(source, "README.md"))
    if not commands:
        print(f"FAIL: no apptracer command under '{SECTION}' in README.md")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for trace in glob.glob(os.path.join(source, "examples", "*")):
            shutil.copy(trace, work)
        for command in commands:
            args = shlex.split(command)
            done = subprocess.run([apptracer] + args[1:], cwd=work, capture_output=True, text=True,
                                  timeout=300)
            if done.returncode != 0:
                failures += 1
                print(f"FAIL: `{command}` exited {done.returncode}: {done.stderr.strip()}")
    if failures:
        print(f"{failures} of {len(commands)} quick-start command(s) failed")
        return 1
    print(f"quick start: {len(commands)} commands ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
