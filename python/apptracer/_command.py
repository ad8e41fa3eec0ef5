"""The `apptracer` console script: the wheel's native command, run in place
of this Python process so exit codes, signals and output are its own."""
import os
import sys

from . import _native


def main():
    try:
        path = _native.command()
    except FileNotFoundError as error:
        sys.stderr.write(f"{error}\n")
        return 1
    os.execv(path, ["apptracer"] + sys.argv[1:])
