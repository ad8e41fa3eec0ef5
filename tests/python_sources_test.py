#!/usr/bin/env python3
"""Every Python file of the repository parses. Many run only on the GPU
machine (test programs, the soak suite, benchmarks), where a syntax error
would cost a device run to find.

    python_sources_test.py REPO
"""
import ast
import os
import sys

SKIPPED_DIRS = {".git", "build", "dist", "node_modules", "__pycache__"}


def main():
    repo = sys.argv[1]
    failures = 0
    count = 0
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith((".", "build"))]
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            count += 1
            try:
                with open(path, encoding="utf-8") as source:
                    ast.parse(source.read(), path)
            except SyntaxError as error:
                failures += 1
                print(f"{os.path.relpath(path, repo)}:{error.lineno}: {error.msg}")
    print(f"{count} Python files, {failures} that do not parse")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
