#!/usr/bin/env python3
"""NCCL collectives across ranks, end to end: runs nccl_collectives.py as
RANKS ranks (one per GPU) untraced, then traced (one trace per rank), merges
the traces and asserts on the collectives rows, their cross-rank matches (the
world's and, from 4 ranks, sub-groups'), `stats --report collectives` and the
merged DVDG's cross-rank edges, which follow each kind's semantics
(docs/dvdg.md: a broadcast reads only the root's buffer).

    check_collectives.py --apps DIR --apptracer PATH [--ranks N] [--keep DIR]

Exits 77 (skipped) without N CUDA GPUs or PyTorch, 0 when every assertion
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


def run_ranks(app, ranks, wrap):
    """Starts the ranks as torchrun would; returns their stdout lines."""
    port = str(free_port())
    procs = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(ranks),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        command = wrap(rank) + [sys.executable, app]
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
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--keep")
    args = parser.parse_args()
    ranks = args.ranks
    try:
        import torch
        if torch.cuda.device_count() < ranks:
            print(f"skipped: fewer than {ranks} CUDA GPUs")
            return SKIPPED
    except ImportError:
        print("skipped: no PyTorch")
        return SKIPPED
    app = os.path.join(args.apps, "nccl_collectives.py")
    work = args.keep or tempfile.mkdtemp(prefix="collectives-")
    os.makedirs(work, exist_ok=True)
    traces = [os.path.join(work, f"collectives_rank{r}.db") for r in range(ranks)]
    merged = os.path.join(work, "collectives_merged.db")
    checks = Checks()

    plain = run_ranks(app, ranks, lambda rank: [])
    traced = run_ranks(app, ranks, lambda rank: [args.apptracer, "record", "-f", "-o", traces[rank], "--"])
    checks.expect(all(code == 0 for code, _ in plain + traced), "every rank exits 0")
    checks.expect([out for _, out in plain] == [out for _, out in traced],
                  "output traced == untraced")
    subprocess.run([args.apptracer, "merge", "--force", "-o", merged] + traces, check=True)
    subgroups = ranks >= 4

    for rank, path in enumerate(traces):
        db = sqlite3.connect(path)
        kinds = [enum(db, "collective_kind", k) for k in
                 ("AllReduce", "Broadcast", "AllGather", "ReduceScatter", "Send", "Recv")]
        counts = dict(db.execute(
            "SELECT c.kind, count(*) FROM collectives c JOIN communicators m"
            " ON m.id = c.communicator_id WHERE m.nranks = ? GROUP BY c.kind", (ranks,)))
        expected = {kinds[0]: 3, kinds[1]: 1, kinds[2]: 1, kinds[3]: 1}
        checks.expect(all(counts.get(k) == n for k, n in expected.items()),
                      f"rank {rank}: 3 all-reduce, 1 broadcast, all-gather, reduce-scatter over all "
                      f"{ranks} ranks ({counts})")
        if subgroups:
            in_groups = db.execute(
                "SELECT m.nranks, count(*) FROM collectives c JOIN communicators m"
                " ON m.id = c.communicator_id WHERE c.kind = ? AND m.nranks < ?"
                " GROUP BY m.nranks ORDER BY m.nranks", (kinds[0], ranks)).fetchall()
            wanted = [(2, 1), (ranks // 2, 1)] if ranks // 2 != 2 else [(2, 2)]
            checks.expect(in_groups == wanted,
                          f"rank {rank}: one all-reduce in its pair, one in its parity group ({in_groups})")
        if rank < 2:
            p2p = db.execute("SELECT count(*) FROM collectives WHERE kind = ? AND peer = ?",
                             (kinds[4] if rank == 0 else kinds[5], 1 - rank)).fetchone()[0]
            checks.expect(p2p == 1, f"rank {rank}: one {'send to' if rank == 0 else 'receive from'} "
                                    f"rank {1 - rank}")
        untimed = db.execute(
            "SELECT count(*) FROM collectives"
            " WHERE gpu_start_ns IS NULL OR gpu_end_ns < gpu_start_ns"
            " OR nccl_seq IS NULL AND kind NOT IN (?, ?)", (kinds[4], kinds[5])).fetchone()[0]
        checks.expect(untimed == 0, f"rank {rank}: every collective has GPU times and NCCL's seqNumber")
        unresolved = db.execute(
            "SELECT count(*) FROM collectives WHERE (send_address IS NOT NULL AND send_alloc_id IS NULL)"
            " OR (recv_address IS NOT NULL AND recv_alloc_id IS NULL)").fetchone()[0]
        checks.expect(unresolved == 0, f"rank {rank}: every buffer resolves to an allocation")
        maxed = db.execute("SELECT count(*) FROM collectives WHERE reduce_op = ?",
                           (enum(db, "reduce_op", "max"),)).fetchone()[0]
        checks.expect(maxed == 1, f"rank {rank}: the MAX all-reduce keeps its operator")

    db = sqlite3.connect(merged)
    sizes = dict(db.execute(
        "SELECT n, count(*) FROM (SELECT match_id, count(*) AS n FROM collective_matches"
        " GROUP BY match_id) GROUP BY n"))
    checks.expect(sizes.get(ranks, 0) >= 6, f"merge: the 6 collectives of all {ranks} ranks joined ({sizes})")
    # The message, and from 4 ranks one all-reduce per pair and per parity group.
    in_pairs = 1 + (ranks // 2 + (2 if ranks // 2 == 2 else 0) if subgroups else 0)
    if ranks > 2:
        checks.expect(sizes.get(2, 0) >= in_pairs, f"merge: {in_pairs} joined across 2 ranks ({sizes})")
    stats = subprocess.run([args.apptracer, "stats", merged, "--report", "collectives", "--format", "csv"],
                           capture_output=True, text=True)
    # NCCL_ALGO="allreduce:tree" (the ranks' environment) makes the all-reduces
    # trees (a plain "Tree" fails: a broadcast has no tree).
    algorithm = "TREE" if "tree" in os.environ.get("NCCL_ALGO", "").lower() else "RING"
    checks.expect(stats.returncode == 0 and f"AllReduce,{ranks}," in stats.stdout and
                  any(line.startswith(f"NCCL,AllReduce,{ranks},") and f",{algorithm}/" in line
                      for line in stats.stdout.splitlines()),
                  f"stats --report collectives lists the {ranks}-rank all-reduces with NCCL's "
                  f"algorithm ({algorithm})")
    print(stats.stdout)
    check_dvdg(args.apptracer, merged, ranks, checks)
    return 1 if checks.failures else 0


# The process whose memory a DVDG value is (its allocation's), NULL for the
# value a collective exchanged.
VALUE_PROCESS = "(SELECT a.process_id FROM allocations a WHERE a.id = v.alloc_id)"


# Which of a collective's ranks each kind reads and writes (docs/dvdg.md's
# table): None is every rank, else the root (rank 0 here) only.
ROOT_READS = {"Broadcast", "Scatter"}
ROOT_WRITES = {"Reduce", "Gather"}


def check_dvdg(apptracer, merged, ranks, checks):
    """One DVDG across ranks: each joined collective reads and writes its
    ranks' buffers through one exchanged value, as its kind says, the
    message joins rank 0's buffer to rank 1's, and a rank's all-reduced data
    comes from every rank's kernels."""
    built = subprocess.run([apptracer, "dvdg", merged], capture_output=True, text=True)
    checks.expect(built.returncode == 0, f"dvdg builds the merged graph {built.stderr.strip()}")
    db = sqlite3.connect(merged)
    kind_names = dict(db.execute("SELECT value, name FROM enum_values WHERE enum = 'collective_kind'"))
    sides = db.execute(
        "SELECT o.id, o.collective_kind, (SELECT count(*) FROM collective_matches cm JOIN collective_matches"
        " first ON first.match_id = cm.match_id WHERE first.collective_id = o.source_id),"
        " count(DISTINCT CASE WHEN x.id = e.dst_value_id THEN " + VALUE_PROCESS.replace("v.", "s.")
        + " END), count(DISTINCT CASE WHEN x.id = e.src_value_id THEN "
        + VALUE_PROCESS.replace("v.", "d.") + " END), count(*)"
        " FROM dvdg_ops o JOIN dvdg_edges e ON e.op_id = o.id"
        " JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_values d ON d.id = e.dst_value_id"
        " JOIN dvdg_values x ON x.producer_op_id = o.id AND x.exchanged = 1"
        " WHERE o.kind = 'collective' AND o.ranks_missing = 0 GROUP BY o.id").fetchall()
    wrong = []
    for op, kind, members, read_from, written_to, edges in sides:
        name = kind_names.get(kind, str(kind))
        expected = (1 if name in ROOT_READS else members, 1 if name in ROOT_WRITES else members)
        if (read_from, written_to) != expected or edges > 2 * members:
            wrong.append((op, name, members, read_from, written_to, edges))
    checks.expect(len(sides) >= 6 and not wrong,
                  f"each joined collective reads and writes its ranks' buffers as its kind says, "
                  f"at most 2 edges per rank ({len(sides)} collectives; wrong: {wrong})")
    message = db.execute(
        "SELECT " + VALUE_PROCESS.replace("v.", "s.") + ", " + VALUE_PROCESS.replace("v.", "d.")
        + " FROM dvdg_ops o JOIN dvdg_edges e ON e.op_id = o.id"
        " JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_values d ON d.id = e.dst_value_id"
        " WHERE o.kind = 'message' AND o.ranks_missing = 0").fetchall()
    checks.expect(message == [(1, 2)], f"the message is one edge from rank 0 to rank 1 ({message})")
    joined = dict(db.execute(
        "SELECT k.process_id, count(*) FROM dvdg_ops o JOIN kernels k ON k.id = o.source_id"
        " WHERE o.kind = 'kernel' AND o.collective_op_id IS NOT NULL GROUP BY k.process_id"))
    checks.expect(sorted(joined) == list(range(1, ranks + 1)), f"each rank's NCCL kernels join their op ({joined})")
    first = db.execute(
        "SELECT v.id FROM dvdg_values v JOIN dvdg_ops o ON o.id = v.producer_op_id"
        " WHERE o.kind = 'collective' AND o.ranks_missing = 0 AND v.exchanged = 0 AND "
        + VALUE_PROCESS + " = 1 ORDER BY o.id LIMIT 1").fetchone()
    checks.expect(first is not None, "rank 0 has a value an all-reduce wrote")
    if first is None:
        return
    producers = [row[0] for row in db.execute(
        "WITH RECURSIVE up(id) AS (SELECT ? UNION SELECT e.src_value_id FROM dvdg_edges e"
        " JOIN up ON e.dst_value_id = up.id)"
        " SELECT DISTINCT k.process_id FROM up JOIN dvdg_values v ON v.id = up.id"
        " JOIN dvdg_ops o ON o.id = v.producer_op_id AND o.kind = 'kernel'"
        " JOIN kernels k ON k.id = o.source_id ORDER BY 1", first)]
    checks.expect(producers == list(range(1, ranks + 1)),
                  f"rank 0's all-reduced tensor comes from every rank's kernels ({producers})")
    why = subprocess.run([apptracer, "dvdg", merged, "--no-store", "--why", f"v{first[0]}"],
                         capture_output=True, text=True)
    checks.expect(why.returncode == 0 and "AllReduce" in why.stdout,
                  "dvdg --why on it goes through the AllReduce")
    print(why.stdout)


if __name__ == "__main__":
    sys.exit(main())
