#!/usr/bin/env python3
"""Analyses read operations from the trace model's one operations model
(analyzer/trace/trace_operations.h), never from the rows of the tables
operations are stored in: a file under analyzer/ outside analyzer/trace/
that names the row type of such a table fails, unless ALLOWED lists it with
the reason it still reads rows. An ALLOWED file that no longer names one
fails too, so the list only shrinks.

    operation_rows_test.py REPO
"""
import os
import re
import sys

# The tables whose rows are operations (their row types are read from tables.def).
OPERATION_TABLES = ("api_calls", "allocations", "memcpys", "memsets", "kernels", "syncs")

# Files that still read operation rows, each with why.
ALLOWED = {
    # Streams every table's rows in time order, one row at a time, so its
    # memory stays bounded on traces of any size (MemoryBounds); the model
    # holds a trace's operations in memory.
    "analyzer/timeline/timeline.cpp": "streams rows",
    # record --exact joins a second run's rows to the first's and writes
    # tables: it copies rows rather than reading operations.
    "analyzer/record/exact_join.cpp": "joins and writes rows",
    "analyzer/record/exact_probe.cpp": "joins and writes rows",
    "analyzer/record/exact_coverage_store.cpp": "writes rows",
    # Look up one API call by correlation id through a cursor (a statement
    # per lookup), a driver call as well as a runtime one: through the model,
    # `stats --report memory` would hold a million calls for the few hundred
    # producers it names.
    "analyzer/memory/producers.h": "cursor over api_calls",
    "analyzer/memory/producers.cpp": "cursor over api_calls",
    # Reads only the calls that made allocations, over the whole trace:
    # allocations made before a step window still count, and the model's
    # calls are the window's (and all of them, a million, where this needs
    # a few hundred).
    "analyzer/memory/memory_model.cpp": "the allocations' calls, whole trace",
    # Every API call, driver calls inside runtime ones included, where the
    # model holds only the calls that issue work (the runtime one of a
    # correlation id): these report on the calls themselves.
    "analyzer/stats/api_calls_report.cpp": "every API call",
    "analyzer/stats/processes_report.cpp": "every API call",
    "analyzer/diff/operations_profile.cpp": "every API call",
    "analyzer/ranks/stragglers.cpp": "every API call",
    # Every outermost API call, and the syncs in trace order (the model's are
    # by start), as the replay takes them.
    "analyzer/whatif/replay_input.cpp": "outermost API calls, syncs by id",
}


def row_types(repo):
    tables = os.path.join(repo, "common", "include", "apptracer", "tables.def")
    with open(tables, encoding="utf-8") as source:
        declared = dict(re.findall(r"APPTRACER_TABLE\(\s*(\w+)\s*,\s*(\w+)", source.read()))
    missing = [table for table in OPERATION_TABLES if table not in declared]
    if missing:
        sys.exit(f"tables.def declares no table {', '.join(missing)}: update OPERATION_TABLES")
    return [declared[table] for table in OPERATION_TABLES]


def main():
    repo = sys.argv[1]
    types = row_types(repo)
    naming = re.compile(r"\b(" + "|".join(types) + r")\b")
    failures = []
    still_allowed = set()
    analyzer = os.path.join(repo, "analyzer")
    for root, dirs, files in os.walk(analyzer):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.relpath(os.path.join(root, name), repo)
            if path.startswith("analyzer/trace/"):
                continue
            with open(os.path.join(repo, path), encoding="utf-8") as source:
                for number, line in enumerate(source, 1):
                    code = line.split("//", 1)[0]
                    found = naming.search(code)
                    if not found:
                        continue
                    if path in ALLOWED:
                        still_allowed.add(path)
                    else:
                        failures.append(f"{path}:{number}: names {found.group(1)}: read the operation "
                                        "through trace.operations() (analyzer/trace/trace_operations.h)")
    for path in sorted(set(ALLOWED) - still_allowed):
        failures.append(f"{path}: names no operation row any more: remove it from ALLOWED")
    for failure in failures:
        print(failure)
    print(f"{len(types)} operation row types; {len(still_allowed)} files allowed to name them; "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
