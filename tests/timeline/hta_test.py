#!/usr/bin/env python3
"""Holistic Trace Analysis (PyPI `HolisticTraceAnalysis`) reads the folder of
`apptracer timeline TRACE --hta DIR` as it reads the PyTorch profiler's, and
its numbers are those `apptracer stats` counts: on copies of the bundled
traces, the sample trace (memsets, NVTX, three streams, 100 ns operations),
vector_add made rank 1 of a 2-rank NCCL job, and that job merged:

- every kernel, copy and memset is an event of its stream, and the copies
  of each kind are all in its memory bandwidth summary (none lost to a
  length of zero or less);
- its temporal breakdown splits the span of the GPU work into idle, compute
  and non-compute time, the compute time within 1% of the time the trace's
  kernels ran;
- its kernel breakdown has the kernels and the copies and memsets by name,
  its kernel and memory totals within 1% of the trace's;
- its GPU user-annotation breakdown has the NVTX ranges;
- a merged job is one file per rank, each rank its own process's.

Usage: hta_test.py APPTRACER MAKE_SAMPLE_TRACE EXAMPLES_DIR

Exits 77 (reported by ctest as skipped) when `hta` is not importable.
"""
import collections
import glob
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import warnings

SKIP = 77
GPU_TABLES = ("kernels", "memcpys", "memsets")


def stats(apptracer, trace, report):
    """Rows of one `apptracer stats` table, with the GPU-timed count of each."""
    output = subprocess.run([apptracer, "stats", trace, "--report", report, "--format", "json"],
                            check=True, capture_output=True, text=True).stdout
    rows = json.loads(output)[report]
    for row in rows:
        row["timed"] = row["count"] - row["untimed"]
    return [row for row in rows if row["timed"] > 0]


def kineto_memory(name):
    return " ".join(word.capitalize() for word in name.split(" "))


def nvtx_names(trace):
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    names = {name for (name,) in db.execute(
        "SELECT s.text FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id")}
    db.close()
    return names


def intervals(trace, tables, process=None):
    """The GPU intervals (ns) of the tables' timed rows (of one process of a merged trace)."""
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    rows = []
    for table in tables:
        where = "" if process is None else f" AND process_id = {process}"
        rows += db.execute(f"SELECT gpu_start_ns, max(gpu_end_ns, gpu_start_ns) FROM {table} WHERE "
                           f"gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL{where}").fetchall()
    db.close()
    return rows


def union_us(spans):
    """How long at least one of the intervals ran, in microseconds."""
    total, end = 0, None
    for start, stop in sorted(spans):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total / 1000


def span_us(spans):
    return (max(stop for _, stop in spans) - min(start for start, _ in spans)) / 1000


def close(got, want, operations):
    """Within 1%; on a trace of few operations, within the microsecond each
    may gain or lose being rounded to whole microseconds."""
    allowed = 0.01 * want if operations >= 100 else max(0.01 * want, operations)
    return abs(got - want) <= allowed


class Checks:
    def __init__(self, apptracer):
        self.apptracer = apptracer
        self.failures = []

    def expect(self, name, what, got, want):
        if got != want:
            self.failures.append(f"{name}: {what}: got {got!r}, want {want!r}")

    def near(self, name, what, got, want, operations):
        if not close(got, want, operations):
            self.failures.append(f"{name}: {what}: {got} us, the trace's {want:.3f} us")

    def folder(self, trace, directory, ranks):
        """Writes the HTA folder of `trace`; checks it holds a file per rank."""
        subprocess.run([self.apptracer, "timeline", trace, "--hta", directory], check=True,
                       capture_output=True)
        self.expect(os.path.basename(trace), "files", sorted(os.listdir(directory)),
                    sorted(f"rank{rank}.json" for rank in ranks))

    def rank(self, analysis, trace, rank, name, process=None, counts_of=None, temporal=True):
        """HTA's view of one rank against the trace (of `process`, in a merged
        one) and `apptracer stats` of `counts_of` (the trace of that process)."""
        counts_of = counts_of or trace
        frame = analysis.t.get_trace(rank)
        symbols = analysis.t.symbol_table.get_sym_table()
        gpu = frame[frame["stream"].ne(-1)]
        by_category = collections.defaultdict(collections.Counter)
        for category, event in zip(gpu["cat"], gpu["name"]):
            by_category[symbols[category]][symbols[event]] += 1

        kernels = {row["name"]: row["timed"] for row in stats(self.apptracer, counts_of, "kernels")}
        copies = collections.Counter()
        copy_kinds = collections.Counter()
        for row in stats(self.apptracer, counts_of, "copies"):
            copies[f"Memcpy {row['kind']} ({kineto_memory(row['src_memory'])} -> "
                   f"{kineto_memory(row['dst_memory'])})"] += row["timed"]
            copy_kinds[f"Memcpy {row['kind']}"] += row["timed"]
        memsets = collections.Counter()
        for row in stats(self.apptracer, counts_of, "memsets"):
            memsets[f"Memset ({kineto_memory(row['memory'])})"] += row["timed"]
        self.expect(name, "GPU categories", set(by_category),
                    {c for c, n in (("kernel", kernels), ("gpu_memcpy", copies),
                                    ("gpu_memset", memsets)) if n})
        self.expect(name, "kernels", dict(by_category["kernel"]), kernels)
        self.expect(name, "copies", dict(by_category["gpu_memcpy"]), dict(copies))
        self.expect(name, "memsets", dict(by_category["gpu_memset"]), dict(memsets))
        if copies:
            # Its bandwidth is bytes over length: a copy of no length is left out.
            # HTA summarizes rank 0 unless told which.
            summary = analysis.get_memory_bw_summary(ranks=[rank])
            got = {kind: int(row[("memory_bw_gbps", "count")]) for (r, kind), row in
                   summary.iterrows() if r == rank and kind.startswith("Memcpy")}
            self.expect(name, "copies in the memory bandwidth summary", got, dict(copy_kinds))

        types, metrics = analysis.get_gpu_kernel_breakdown(
            visualize=False, num_kernels=1_000_000, duration_ratio=1.0, include_memory_kernels=True)
        metrics = metrics[metrics["rank"] == rank]
        by_type = collections.defaultdict(set)
        for kernel_type, kernel in zip(metrics["kernel_type"], metrics["name"]):
            by_type[kernel_type].add(kernel)
        self.expect(name, "kernel breakdown: compute kernels", by_type["COMPUTATION"], set(kernels))
        self.expect(name, "kernel breakdown: memory kernels", by_type["MEMORY"],
                    set(copies) | set(memsets))

        kernel_spans = intervals(trace, ("kernels",), process)
        memory_spans = intervals(trace, ("memcpys", "memsets"), process)
        if kernel_spans:
            total = metrics[metrics["kernel_type"] == "COMPUTATION"]["sum (us)"].sum()
            self.near(name, "kernel breakdown: kernels' total", total,
                      sum(stop - start for start, stop in kernel_spans) / 1000, len(kernel_spans))
        if len(analysis.t.traces) == 1:  # its kernel type totals are of every rank
            sums = dict(zip(types["kernel_type"], types["sum"]))
            for kernel_type, spans in (("COMPUTATION", kernel_spans), ("MEMORY", memory_spans)):
                if spans:
                    got = sum(v for k, v in sums.items() if kernel_type in k)
                    self.near(name, f"kernel breakdown: {kernel_type} time", got, union_us(spans),
                              len(spans))

        annotations = analysis.get_gpu_user_annotation_breakdown(visualize=False,
                                                                 num_kernels=1_000_000)
        if len(analysis.t.traces) == 1:
            self.expect(name, "GPU user annotations",
                        set() if annotations is None else set(annotations["name"]),
                        nvtx_names(counts_of))

        if not temporal:
            return
        breakdown = analysis.get_temporal_breakdown(visualize=False)
        row = breakdown[breakdown["rank"] == rank].iloc[0]
        parts = row["idle_time(us)"] + row["compute_time(us)"] + row["non_compute_time(us)"]
        self.expect(name, "idle + compute + non-compute = span", parts, row["kernel_time(us)"])
        every = kernel_spans + memory_spans
        self.near(name, "temporal breakdown: span", row["kernel_time(us)"], span_us(every), 1)
        self.near(name, "temporal breakdown: compute time", row["compute_time(us)"],
                  union_us(kernel_spans), len(kernel_spans))


def make_rank(source, path, rank, nranks):
    """A copy of `source` that held rank `rank` of an NCCL communicator."""
    shutil.copy(source, path)
    db = sqlite3.connect(path)
    nccl = db.execute("SELECT value FROM enum_values WHERE enum = 'comm_library' AND name = 'NCCL'"
                      ).fetchone()[0]
    db.execute("INSERT INTO communicators (library, comm_id, rank, nranks, created_ns) "
               "VALUES (?, 77, ?, ?, 0)", (nccl, rank, nranks))
    db.commit()
    db.close()


def main():
    apptracer, make_sample_trace, examples = sys.argv[1:4]
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError as error:
        print(f"SKIP: Python package 'hta' not importable ({error}); "
              "pip install HolisticTraceAnalysis to run this test", file=sys.stderr)
        return SKIP
    # HTA warns about what PyTorch traces have and ours lack (ProfilerStep),
    # and about pandas features it uses that pandas deprecated.
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore", FutureWarning)

    checks = Checks(apptracer)
    with tempfile.TemporaryDirectory() as work:
        traces = []
        for example in sorted(glob.glob(os.path.join(examples, "*.db"))):
            traces.append(shutil.copy(example, work))
        sample = os.path.join(work, "sample.db")
        subprocess.run([make_sample_trace, sample], check=True)
        traces.append(sample)
        vector_add = os.path.join(work, "vector_add.db")
        job = []
        for rank in (0, 1):
            job.append(os.path.join(work, f"vector_add_rank{rank}.db"))
            make_rank(vector_add, job[-1], rank, 2)
        traces.append(job[1])
        for trace in traces:
            name = os.path.basename(trace)
            rank = 1 if trace == job[1] else 0
            directory = os.path.join(work, name + ".hta")
            checks.folder(trace, directory, [rank])
            checks.rank(TraceAnalysis(trace_dir=directory), trace, rank, name)

        merged = os.path.join(work, "job.db")
        subprocess.run([apptracer, "merge", *job, "-o", merged], check=True, capture_output=True)
        directory = os.path.join(work, "job.hta")
        checks.folder(merged, directory, [0, 1])
        analysis = TraceAnalysis(trace_dir=directory)
        for rank in (0, 1):
            checks.rank(analysis, merged, rank, f"job.db rank {rank}", process=rank + 1,
                        counts_of=job[rank])
        count = len(traces) + 1
    for failure in checks.failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    if not checks.failures:
        print(f"ok: HTA reads the timelines of {count} traces as apptracer stats counts them")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
