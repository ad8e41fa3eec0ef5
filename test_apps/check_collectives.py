#!/usr/bin/env python3
"""NCCL collectives across two ranks, end to end (issue 19): runs
nccl_collectives.py as 2 ranks untraced, then traced (one trace per rank),
merges the traces and asserts on the collectives rows, their cross-rank
matches and `stats --report collectives`.

    check_collectives.py --apps DIR --apptracer PATH [--keep DIR]

Exits 77 (skipped) without 2 CUDA GPUs or PyTorch, 0 when every assertion
holds, 1 otherwise.
"""
import argparse
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile

SKIPPED = 77


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(app, wrap, outputs):
    """Starts both ranks as torchrun would; returns their stdout lines."""
    port = str(free_port())
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        command = wrap(rank, outputs) + [sys.executable, app]
        procs.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        results.append((p.returncode, out.strip()))
    return results


class Checks:
    def __init__(self):
        self.failures = 0

    def expect(self, condition, what):
        print(("ok   " if condition else "FAIL ") + what)
        if not condition:
            self.failures += 1


def enum(db, name, value_name):
    row = db.execute("SELECT value FROM enum_values WHERE enum = ? AND name = ?",
                     (name, value_name)).fetchone()
    return row[0] if row else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", required=True)
    parser.add_argument("--apptracer", required=True)
    parser.add_argument("--keep")
    args = parser.parse_args()
    try:
        import torch
        if torch.cuda.device_count() < 2:
            print("skipped: fewer than 2 CUDA GPUs")
            return SKIPPED
    except ImportError:
        print("skipped: no PyTorch")
        return SKIPPED
    app = os.path.join(args.apps, "nccl_collectives.py")
    work = args.keep or tempfile.mkdtemp(prefix="collectives-")
    os.makedirs(work, exist_ok=True)
    traces = [os.path.join(work, f"collectives_rank{r}.db") for r in range(2)]
    merged = os.path.join(work, "collectives_merged.db")
    checks = Checks()

    plain = run_ranks(app, lambda rank, _: [], None)
    traced = run_ranks(app, lambda rank, _: [args.apptracer, "record", "-f", "-o", traces[rank], "--"],
                       traces)
    checks.expect(all(code == 0 for code, _ in plain + traced), "every rank exits 0")
    checks.expect([out for _, out in plain] == [out for _, out in traced],
                  "output traced == untraced")
    subprocess.run([args.apptracer, "merge", "--force", "-o", merged] + traces, check=True)

    for rank, path in enumerate(traces):
        db = sqlite3.connect(path)
        kinds = [enum(db, "collective_kind", k) for k in
                 ("AllReduce", "Broadcast", "AllGather", "ReduceScatter", "Send", "Recv")]
        counts = dict(db.execute(
            "SELECT c.kind, count(*) FROM collectives c JOIN communicators m"
            " ON m.id = c.communicator_id WHERE m.nranks = 2 GROUP BY c.kind"))
        expected = {kinds[0]: 3, kinds[1]: 1, kinds[2]: 1, kinds[3]: 1}
        checks.expect(all(counts.get(k) == n for k, n in expected.items()),
                      f"rank {rank}: 3 all-reduce, 1 broadcast, all-gather, reduce-scatter ({counts})")
        p2p = db.execute("SELECT count(*) FROM collectives WHERE kind = ? AND peer = ?",
                         (kinds[4] if rank == 0 else kinds[5], 1 - rank)).fetchone()[0]
        checks.expect(p2p == 1, f"rank {rank}: one {'send to' if rank == 0 else 'receive from'} "
                                f"rank {1 - rank}")
        untimed = db.execute(
            "SELECT count(*) FROM collectives c JOIN communicators m ON m.id = c.communicator_id"
            " WHERE m.nranks = 2 AND (gpu_start_ns IS NULL OR gpu_end_ns < gpu_start_ns"
            " OR nccl_seq IS NULL AND kind NOT IN (?, ?))", (kinds[4], kinds[5])).fetchone()[0]
        checks.expect(untimed == 0, f"rank {rank}: every collective has GPU times and NCCL's seqNumber")
        unresolved = db.execute(
            "SELECT count(*) FROM collectives WHERE (send_address IS NOT NULL AND send_alloc_id IS NULL)"
            " OR (recv_address IS NOT NULL AND recv_alloc_id IS NULL)").fetchone()[0]
        checks.expect(unresolved == 0, f"rank {rank}: every buffer resolves to an allocation")
        maxed = db.execute("SELECT count(*) FROM collectives WHERE reduce_op = ?",
                           (enum(db, "reduce_op", "max"),)).fetchone()[0]
        checks.expect(maxed == 1, f"rank {rank}: the MAX all-reduce keeps its operator")

    db = sqlite3.connect(merged)
    matched = db.execute(
        "SELECT count(*) FROM (SELECT match_id FROM collective_matches GROUP BY match_id"
        " HAVING count(*) = 2)").fetchone()[0]
    checks.expect(matched >= 7, f"merge: 6 collectives and 1 message joined across ranks ({matched})")
    stats = subprocess.run([args.apptracer, "stats", merged, "--report", "collectives", "-f", "csv"],
                           capture_output=True, text=True)
    checks.expect(stats.returncode == 0 and "AllReduce" in stats.stdout and "RING" in stats.stdout,
                  "stats --report collectives lists the all-reduces with NCCL's algorithm")
    print(stats.stdout)
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
