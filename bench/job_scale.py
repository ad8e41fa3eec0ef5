#!/usr/bin/env python3
"""The cross-rank analysis on synthetic jobs: N ranks made from one rank's
exported trace, each rank's times perturbed, exported as Parquet partitioned
by rank, and apptracer.job.stragglers run by DuckDB on them; its wall time
and peak memory (a child process per job, ru_maxrss) per N.

    job_scale.py OUT_DIR [--base RANK_TRACE.db] [--ranks 8 64 512] [--steps 500]

With --base, the ranks are copies of that real rank's trace. Without, the
base rank is synthetic: per step (NVTX range "step") 20 kernel launches
(a runtime call and a kernel each) and one all-gather. Each rank's times are
shifted by its own offset plus, per collective, a jitter of up to 50 us; the
last rank is 20 ms late at step 5. Prints a Markdown table.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import time

from apptracer import job

TIME_COLUMNS = {
    "api_calls": ("start_ns", "end_ns"),
    "kernels": ("api_start_ns", "gpu_start_ns", "gpu_end_ns"),
    "memcpys": ("api_start_ns", "gpu_start_ns", "gpu_end_ns"),
    "memsets": ("api_start_ns", "gpu_start_ns", "gpu_end_ns"),
    "syncs": ("start_ns", "end_ns"),
    "nvtx_ranges": ("start_ns", "end_ns"),
    "collectives": ("api_start_ns", "api_end_ns", "complete_ns", "gpu_start_ns", "gpu_end_ns"),
    "communicators": ("created_ns", "destroyed_ns"),
    "strings": (),
}
STEP_NS = 50_000_000
KERNELS_PER_STEP = 20


def synthetic_base(directory, steps):
    """One rank's tables, written by DuckDB straight to Parquet (rank 0)."""
    connection = __import__("duckdb").connect()
    tables = {
        "strings": "SELECT 1::BIGINT AS id, 'step' AS text UNION ALL SELECT 2, 'cudaLaunchKernel'",
        "communicators": "SELECT 1::BIGINT AS id, 1::BIGINT AS library, 24301::BIGINT AS comm_id, "
                         "0::BIGINT AS rank, 0::BIGINT AS nranks, 0::BIGINT AS created_ns, "
                         "NULL::BIGINT AS destroyed_ns",
        "api_calls": f"SELECT i::BIGINT AS id, i::BIGINT AS correlation_id, 2::BIGINT AS name_id, "
                     f"7::BIGINT AS tid, (i // {KERNELS_PER_STEP}) * {STEP_NS} + (i % {KERNELS_PER_STEP}) * 20000 "
                     f"AS start_ns, (i // {KERNELS_PER_STEP}) * {STEP_NS} + (i % {KERNELS_PER_STEP}) * 20000 + 5000 "
                     f"AS end_ns FROM range({steps * KERNELS_PER_STEP}) t(i)",
        "kernels": f"SELECT i::BIGINT AS id, i::BIGINT AS call_correlation_id, 7::BIGINT AS stream, "
                   f"(i // {KERNELS_PER_STEP}) * {STEP_NS} + (i % {KERNELS_PER_STEP}) * 20000 AS api_start_ns, "
                   f"(i // {KERNELS_PER_STEP}) * {STEP_NS} + (i % {KERNELS_PER_STEP}) * 20000 + 8000 AS gpu_start_ns, "
                   f"(i // {KERNELS_PER_STEP}) * {STEP_NS} + (i % {KERNELS_PER_STEP}) * 20000 + 18000 AS gpu_end_ns "
                   f"FROM range({steps * KERNELS_PER_STEP}) t(i)",
        "memcpys": "SELECT 0::BIGINT AS stream, 0::BIGINT AS api_start_ns, 0::BIGINT AS gpu_start_ns, "
                   "0::BIGINT AS gpu_end_ns WHERE false",
        "memsets": "SELECT 0::BIGINT AS stream, 0::BIGINT AS api_start_ns, 0::BIGINT AS gpu_start_ns, "
                   "0::BIGINT AS gpu_end_ns WHERE false",
        "syncs": "SELECT 0::BIGINT AS call_correlation_id, 0::BIGINT AS start_ns, 0::BIGINT AS end_ns "
                 "WHERE false",
        "collectives": f"SELECT s::BIGINT AS id, 1::BIGINT AS communicator_id, 4::BIGINT AS kind, "
                       f"s::BIGINT AS seq, 7::BIGINT AS tid, 7::BIGINT AS stream, "
                       f"s * {STEP_NS} + 600000 AS api_start_ns, s * {STEP_NS} + 610000 AS api_end_ns, "
                       f"NULL::BIGINT AS complete_ns, s * {STEP_NS} + 605000 AS gpu_start_ns, "
                       f"s * {STEP_NS} + 700000 AS gpu_end_ns FROM range({steps}) t(s)",
        "nvtx_ranges": f"SELECT s::BIGINT AS id, 1::BIGINT AS name_id, 7::BIGINT AS tid, 0::BIGINT AS depth, "
                       f"s * {STEP_NS} AS start_ns, s * {STEP_NS} + 800000 AS end_ns FROM range({steps}) t(s)",
    }
    for table, select in tables.items():
        target = os.path.join(directory, table, f"{job.PARTITION}=0")
        os.makedirs(target)
        connection.execute(f"COPY ({select}) TO '{target}/part-0.parquet' (FORMAT PARQUET)")


def make_job(base, directory, ranks):
    """`ranks` copies of the base rank, times perturbed, the last rank late."""
    connection = __import__("duckdb").connect()
    for table, times in TIME_COLUMNS.items():
        source = os.path.join(base, table, f"{job.PARTITION}=*", "*.parquet")
        for rank in range(ranks):
            target = os.path.join(directory, table, f"{job.PARTITION}={rank}")
            os.makedirs(target)
            # Every time of the rank shifted by its offset; a collective's by a
            # jitter of its own too, and the last rank's at step 5 by 20 ms.
            jitter = (f"+ (hash({rank}, seq) % 50000)::BIGINT "
                      f"+ CASE WHEN seq = 5 AND {rank} = {ranks - 1} THEN 20000000 ELSE 0 END"
                      if table == "collectives" else "")
            replaced = ", ".join(f"{c} + {rank * 1000} {jitter if c in ('api_start_ns', 'gpu_start_ns') else ''} AS {c}"
                                 for c in times)
            rank_column = ", ".join(filter(None, [f"{rank}::BIGINT AS rank" if table == "communicators" else "",
                                                  f"{ranks}::BIGINT AS nranks" if table == "communicators" else ""]))
            replace = ", ".join(filter(None, [replaced, rank_column]))
            select = f"SELECT * EXCLUDE ({job.PARTITION})" + (f" REPLACE ({replace})" if replace else "")
            connection.execute(f"COPY ({select} FROM read_parquet('{source}', hive_partitioning = true)) "
                               f"TO '{target}/part-0.parquet' (FORMAT PARQUET)")


def measure(directory):
    """Runs the analysis in a child; (seconds, peak MiB, rows, first row)."""
    code = ("import sys, time, resource; from apptracer import job; t = time.perf_counter(); "
            "late = job.stragglers(sys.argv[1]); s = time.perf_counter() - t; "
            "first = late.iloc[0] if len(late) else None; "
            "print(s, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, len(late), "
            "'' if first is None else f\"{first['late_rank']}/{first['seq']}/{first['held_by']}/{first['wait_ns']}\", "
            "sep='\\t')")
    out = subprocess.run([sys.executable, "-c", code, directory], capture_output=True, text=True, check=True)
    seconds, peak, rows, first = out.stdout.rstrip("\n").split("\t")
    return float(seconds), float(peak), int(rows), first


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--base")
    parser.add_argument("--ranks", type=int, nargs="+", default=[8, 64, 512])
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    base = os.path.join(args.out, "base")
    shutil.rmtree(args.out, ignore_errors=True)
    if args.base:
        job.export_parquet([args.base], base)
    else:
        synthetic_base(base, args.steps)
    print("| ranks | rows (all tables) | Parquet MiB | analysis s | peak MiB | stragglers | first: rank/seq/held by/wait ns |")
    print("|---|---|---|---|---|---|---|")
    for ranks in args.ranks:
        directory = os.path.join(args.out, f"job{ranks}")
        make_job(base, directory, ranks)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(directory) for f in fs)
        rows = job.connect(directory).execute(
            " + ".join(f"(SELECT count(*) FROM {t})" for t in TIME_COLUMNS).join(["SELECT ", ""])).fetchone()[0]
        seconds, peak, found, first = measure(directory)
        print(f"| {ranks} | {rows:,} | {size / 2**20:.1f} | {seconds:.2f} | {peak:.0f} | {found} | {first} |")
        shutil.rmtree(directory)
    shutil.rmtree(args.out)


if __name__ == "__main__":
    main()
