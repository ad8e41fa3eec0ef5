#!/usr/bin/env python3
"""Prints how many kernel launches of a trace have at least one argument
resolved to an allocation, overall and per kernel name (top 10)."""
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
total, resolved = db.execute(
    "SELECT count(*), sum(EXISTS (SELECT 1 FROM kernel_args a WHERE a.kernel_id = k.id "
    "AND a.alloc_id IS NOT NULL)) FROM kernels k").fetchone()
print(f"kernel launches: {total}, with at least one resolved pointer: {resolved} "
      f"({100.0 * (resolved or 0) / max(total, 1):.1f}%)")
for name, count, hit in db.execute(
        "SELECT coalesce(d.text, '?'), count(*), sum(EXISTS (SELECT 1 FROM kernel_args a "
        "WHERE a.kernel_id = k.id AND a.alloc_id IS NOT NULL)) FROM kernels k "
        "LEFT JOIN strings d ON d.id = k.demangled_id GROUP BY 1 ORDER BY 2 DESC LIMIT 10"):
    print(f"  {hit:>5}/{count:<5} {name[:110]}")
