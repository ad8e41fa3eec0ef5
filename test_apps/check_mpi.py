#!/usr/bin/env python3
"""MPI across ranks, end to end: runs mpi_exchange.py as 2 ranks under mpirun
untraced, then traced (one trace per rank), merges the traces and asserts on
the collectives rows (every MPI call, its host buffers resolved to
allocations), their cross-rank matches, and the merged DVDG: it builds, each
message is one edge from the sender's buffer to the receiver's, each
all-reduce reads both ranks' host buffers, and what a rank copies back to its
GPU comes from both ranks' kernels.

    check_mpi.py --apps DIR --apptracer PATH [--keep DIR]

Exits 77 (skipped) without mpirun, mpi4py, PyTorch or 2 CUDA GPUs, 0 when
every assertion holds, 1 otherwise.
"""
import argparse
import glob
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from check_collectives import SKIPPED, Checks, VALUE_PROCESS

ITERATIONS = 5
# Per iteration and rank: MPI_Allreduce, MPI_Sendrecv (a send and a receive), MPI_Bcast.
CALLS_PER_ITERATION = 4


def missing_requirement():
    if not shutil.which("mpirun"):
        return "no mpirun"
    try:
        import mpi4py  # noqa: F401
        import torch
    except ImportError as error:
        return f"no {error.name}"
    if torch.cuda.device_count() < 2:
        return "fewer than 2 CUDA GPUs"
    return None


def mpirun(command):
    """Runs 2 ranks; returns (exit code, each rank's output line, sorted)."""
    done = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", *command],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        print(done.stdout + done.stderr)
    lines = sorted(line for line in done.stdout.splitlines() if line.startswith("rank "))
    return done.returncode, lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", required=True)
    parser.add_argument("--apptracer", required=True)
    parser.add_argument("--keep")
    args = parser.parse_args()
    missing = missing_requirement()
    if missing:
        print(f"skipped: {missing}")
        return SKIPPED
    app = [sys.executable, os.path.join(args.apps, "mpi_exchange.py"), "--iterations", str(ITERATIONS)]
    work = args.keep or tempfile.mkdtemp(prefix="mpi-")
    os.makedirs(work, exist_ok=True)
    for old in glob.glob(os.path.join(work, "mpi_rank-*.db")):
        os.remove(old)
    merged = os.path.join(work, "mpi_merged.db")
    checks = Checks()

    plain = mpirun(app)
    traced = mpirun([args.apptracer, "record", "-o", os.path.join(work, "mpi_rank-%p.db"), "--", *app])
    checks.expect(plain[0] == 0 and traced[0] == 0, "both runs exit 0")
    checks.expect(len(plain[1]) == 2 and plain[1] == traced[1],
                  f"output traced == untraced ({plain[1]} / {traced[1]})")
    traces = sorted(glob.glob(os.path.join(work, "mpi_rank-*.db")))
    checks.expect(len(traces) == 2, f"one trace per rank ({traces})")
    if len(traces) != 2:
        return 1
    for path in traces:
        db = sqlite3.connect(path)
        calls = db.execute("SELECT count(*) FROM collectives").fetchone()[0]
        checks.expect(calls == ITERATIONS * CALLS_PER_ITERATION,
                      f"{os.path.basename(path)}: {ITERATIONS * CALLS_PER_ITERATION} MPI calls ({calls})")
        unresolved = db.execute(
            "SELECT count(*) FROM collectives WHERE (send_address IS NOT NULL AND send_alloc_id IS NULL)"
            " OR (recv_address IS NOT NULL AND recv_alloc_id IS NULL)").fetchone()[0]
        checks.expect(unresolved == 0, f"{os.path.basename(path)}: every host buffer is an allocation"
                      f" ({unresolved} unresolved)")
    subprocess.run([args.apptracer, "merge", "--force", "-o", merged] + traces, check=True)
    db = sqlite3.connect(merged)
    unmatched = db.execute("SELECT count(*) FROM collectives WHERE id NOT IN"
                           " (SELECT collective_id FROM collective_matches)").fetchone()[0]
    checks.expect(unmatched == 0, f"merge: every call joined its peer's ({unmatched} not)")
    built = subprocess.run([args.apptracer, "dvdg", merged], capture_output=True, text=True)
    checks.expect(built.returncode == 0 and "contradicted" not in built.stdout,
                  f"dvdg builds the merged graph in one consistent order {built.stdout.strip()}"
                  f" {built.stderr.strip()}")
    check_dvdg(db, checks)
    return 1 if checks.failures else 0


def check_dvdg(db, checks):
    messages = db.execute(
        "SELECT " + VALUE_PROCESS.replace("v.", "s.") + ", " + VALUE_PROCESS.replace("v.", "d.")
        + " FROM dvdg_ops o JOIN dvdg_edges e ON e.op_id = o.id"
        " JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_values d ON d.id = e.dst_value_id"
        " WHERE o.kind = 'message' AND o.ranks_missing = 0").fetchall()
    checks.expect(sorted(messages) == sorted([(1, 2), (2, 1)] * ITERATIONS),
                  f"each message is one edge from one rank to the other ({len(messages)} edges)")
    reductions = db.execute(
        "SELECT o.id, count(DISTINCT " + VALUE_PROCESS.replace("v.", "s.") + ")"
        " FROM dvdg_ops o JOIN dvdg_edges e ON e.op_id = o.id JOIN dvdg_values s ON s.id = e.src_value_id"
        " JOIN enum_values k ON k.enum = 'collective_kind' AND k.value = o.collective_kind"
        " WHERE o.kind = 'collective' AND k.name = 'AllReduce' AND s.exchanged = 0 GROUP BY o.id").fetchall()
    checks.expect(len(reductions) == ITERATIONS and all(ranks == 2 for _, ranks in reductions),
                  f"each all-reduce reads both ranks' host buffers ({reductions})")
    # The last copy to a GPU on each rank: what came back from MPI.
    for process in (1, 2):
        last = db.execute(
            "SELECT v.id FROM dvdg_ops o JOIN memcpys m ON m.id = o.source_id"
            " JOIN dvdg_edges e ON e.op_id = o.id JOIN dvdg_values v ON v.id = e.src_value_id"
            " WHERE o.kind = 'copy' AND m.process_id = ? AND m.kind = 1 ORDER BY o.id DESC LIMIT 1",
            (process,)).fetchone()
        producers = [] if last is None else [row[0] for row in db.execute(
            "WITH RECURSIVE up(id) AS (SELECT ? UNION SELECT e.src_value_id FROM dvdg_edges e"
            " JOIN up ON e.dst_value_id = up.id)"
            " SELECT DISTINCT k.process_id FROM up JOIN dvdg_values v ON v.id = up.id"
            " JOIN dvdg_ops o ON o.id = v.producer_op_id AND o.kind = 'kernel'"
            " JOIN kernels k ON k.id = o.source_id ORDER BY 1", last)]
        checks.expect(producers == [1, 2],
                      f"rank {process - 1}: what it copied back to its GPU comes from both ranks' kernels"
                      f" ({producers})")


if __name__ == "__main__":
    sys.exit(main())
