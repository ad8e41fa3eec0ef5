"""What apptracer's own commands say of a trace, for the checks of several
families: the DVDG (`apptracer dvdg`, stored or as JSON) and the findings of
`apptracer diagnose`. The checks compare them with what the app did.
"""
import json
import sqlite3
import subprocess

from . import base


def dvdg_edges(trace):
    """Builds the trace's DVDG with `apptracer dvdg` and returns its edges as
    (source allocation, version, destination allocation, version, operation
    kind), allocation None for a host region no allocation covers."""
    result = subprocess.run([base.APPTRACER, "dvdg", trace.path], capture_output=True, text=True)
    if result.returncode != 0:
        return [("apptracer dvdg failed", result.stderr.strip())]
    db = sqlite3.connect(trace.path)
    try:
        return db.execute(
            "SELECT s.alloc_id, s.version, d.alloc_id, d.version, o.kind FROM dvdg_edges e "
            "JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_values d ON d.id = e.dst_value_id "
            "JOIN dvdg_ops o ON o.id = e.op_id WHERE e.kind = 'data' "
            "ORDER BY e.op_id, s.alloc_id, d.alloc_id").fetchall()
    finally:
        db.close()


def dvdg_json(c, t):
    """The trace's DVDG as `apptracer dvdg --format json -o -` gives it (not stored)."""
    result = subprocess.run([base.APPTRACER, "dvdg", "--no-store", t.path, "--format", "json", "-o", "-"],
                            capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer dvdg: {result.stderr.strip()}")
    return json.loads(result.stdout) if result.returncode == 0 else {"values": [], "ops": [], "edges": []}


def uninitialized_reads(graph):
    """The DVDG's reads of memory nothing wrote: (reader, value) labels."""
    ops = {op["id"]: op["name"] for op in graph["ops"]}
    values = {value["id"]: value["label"] for value in graph["values"]}
    return [(ops.get(e["op"]), values.get(e["src"])) for e in graph["edges"] if e["uninitialized_read"]]


def diagnose_findings(c, trace):
    """Every finding of `apptracer diagnose --format json --all` on the trace
    (the default shows 10: a check must not depend on how many others there are)."""
    result = subprocess.run([base.APPTRACER, "diagnose", trace.path, "--format", "json", "--all"],
                            capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer diagnose exit status ({result.stderr.strip()})")
    if result.returncode != 0:
        return []
    return json.loads(result.stdout)["findings"]
