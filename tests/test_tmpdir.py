#!/usr/bin/env python3
"""The directory every test gets as TMPDIR.

    test_tmpdir.py fresh DIR   # before the tests: DIR exists and is empty
    test_tmpdir.py empty DIR   # after them: fails naming what they left in DIR
"""
import os
import shutil
import sys


def make_removable(directory):
    for root, dirs, _ in os.walk(directory):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)


def main():
    action, directory = sys.argv[1:3]
    if action == "fresh":
        if os.path.exists(directory):
            make_removable(directory)
            shutil.rmtree(directory)
        os.makedirs(directory)
        return 0
    left = sorted(os.listdir(directory))
    for name in left:
        print(f"left in TMPDIR by a test: {name}")
    print(f"{directory}: {'empty' if not left else f'{len(left)} files or directories left'}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
