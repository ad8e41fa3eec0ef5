#!/usr/bin/env python3
"""libapptracer.so loaded after the program started, as the CUDA driver loads
it through CUDA_INJECTION64_PATH and the Python bootstrap's ctypes may: the
library's initial-exec thread-local storage must fit in the little static
TLS space glibc keeps for libraries loaded late (about 1.6 KiB, shared), or
dlopen fails with "cannot allocate memory in static TLS block".

    late_load_test.py LIBRARY...
"""
import subprocess
import sys

LOAD = "import ctypes, sys\nfor path in sys.argv[1:]:\n    ctypes.CDLL(path)\n"


def main():
    failures = 0
    for library in sys.argv[1:]:
        done = subprocess.run([sys.executable, "-c", LOAD, library], capture_output=True, text=True,
                              timeout=60)
        if done.returncode != 0:
            print(f"FAIL {library} does not load late: {done.stderr.strip().splitlines()[-1:]}")
            failures += 1
        else:
            print(f"ok   {library} loads late")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
