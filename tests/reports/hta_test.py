#!/usr/bin/env python3
"""Holistic Trace Analysis (PyPI `HolisticTraceAnalysis`) reads the Chrome
JSON of `apptracer timeline -f chrome-json` as it reads the PyTorch
profiler's: on the bundled traces, on the sample trace (memsets, NVTX, three
streams) and on vector_add made rank 1 of a 2-rank NCCL job, its temporal
breakdown splits the span of the GPU work into idle, compute and non-compute
time (on the recorded traces), the kernels, copies and memsets it finds are
those `apptracer stats` counts, and its GPU user-annotation breakdown has the
NVTX ranges.

Usage: hta_test.py APPTRACER MAKE_SAMPLE_TRACE EXAMPLES_DIR

Exits 77 (reported by ctest as skipped) when `hta` is not importable.
"""
import collections
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


def gpu_span_us(trace):
    """From the first GPU operation's start to the last one's end."""
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    first, last = db.execute(
        "SELECT min(s), max(e) FROM (SELECT gpu_start_ns s, gpu_end_ns e FROM kernels UNION ALL "
        "SELECT gpu_start_ns, gpu_end_ns FROM memcpys UNION ALL SELECT gpu_start_ns, gpu_end_ns "
        "FROM memsets) WHERE s IS NOT NULL AND e IS NOT NULL").fetchone()
    db.close()
    return (last - first) / 1000


def check(apptracer, trace, directory, rank, failures, temporal=True):
    from hta.trace_analysis import TraceAnalysis

    name = os.path.basename(trace)
    os.makedirs(directory)
    subprocess.run([apptracer, "timeline", trace, "-f", "chrome-json", "-o",
                    os.path.join(directory, "trace.json")], check=True, capture_output=True)
    analysis = TraceAnalysis(trace_dir=directory)

    def expect(what, got, want):
        if got != want:
            failures.append(f"{name}: {what}: got {got!r}, want {want!r}")

    frame = analysis.t.get_trace(rank)
    symbols = analysis.t.symbol_table.get_sym_table()
    gpu = frame[frame["stream"].ne(-1)]
    by_category = collections.defaultdict(collections.Counter)
    for category, event in zip(gpu["cat"], gpu["name"]):
        by_category[symbols[category]][symbols[event]] += 1

    kernels = {row["name"]: row["timed"] for row in stats(apptracer, trace, "kernels")}
    copies = collections.Counter()
    for row in stats(apptracer, trace, "copies"):
        copies[f"Memcpy {row['kind']} ({kineto_memory(row['src_memory'])} -> "
               f"{kineto_memory(row['dst_memory'])})"] += row["timed"]
    memsets = collections.Counter()
    for row in stats(apptracer, trace, "memsets"):
        memsets[f"Memset ({kineto_memory(row['memory'])})"] += row["timed"]
    expect("GPU categories", set(by_category), {c for c, n in
                                                 (("kernel", kernels), ("gpu_memcpy", copies),
                                                  ("gpu_memset", memsets)) if n})
    expect("kernels", dict(by_category["kernel"]), kernels)
    expect("copies", dict(by_category["gpu_memcpy"]), dict(copies))
    expect("memsets", dict(by_category["gpu_memset"]), dict(memsets))

    _, metrics = analysis.get_gpu_kernel_breakdown(visualize=False, num_kernels=1_000_000,
                                                   duration_ratio=1.0, include_memory_kernels=True)
    by_type = collections.defaultdict(set)
    for kernel_type, kernel in zip(metrics["kernel_type"], metrics["name"]):
        by_type[kernel_type].add(kernel)
    expect("kernel breakdown: compute kernels", by_type["COMPUTATION"], set(kernels))
    expect("kernel breakdown: memory kernels", by_type["MEMORY"], set(copies) | set(memsets))
    expect("kernel breakdown: ranks", set(metrics["rank"]), {rank})

    # Every NVTX range of the traces here issued GPU work: each is on a stream.
    annotations = analysis.get_gpu_user_annotation_breakdown(visualize=False,
                                                             num_kernels=1_000_000)
    expect("GPU user annotations", set() if annotations is None else set(annotations["name"]),
           nvtx_names(trace))

    if not temporal:
        return
    breakdown = analysis.get_temporal_breakdown(visualize=False)
    expect("temporal breakdown: ranks", list(breakdown["rank"]), [rank])
    row = breakdown.iloc[0]
    parts = row["idle_time(us)"] + row["compute_time(us)"] + row["non_compute_time(us)"]
    expect("idle + compute + non-compute = span", parts, row["kernel_time(us)"])
    # HTA rounds each start up and each end down to a whole microsecond.
    span = gpu_span_us(trace)
    if abs(row["kernel_time(us)"] - span) > 2:
        failures.append(f"{name}: temporal breakdown's span {row['kernel_time(us)']} us, "
                        f"the GPU work's {span:.3f} us")
    if not by_category["kernel"] or row["compute_time(us)"] <= 0:
        failures.append(f"{name}: no compute time ({row['compute_time(us)']} us)")


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
        import hta  # noqa: F401
    except ImportError as error:
        print(f"SKIP: Python package 'hta' not importable ({error}); "
              "pip install HolisticTraceAnalysis to run this test", file=sys.stderr)
        return SKIP
    # HTA warns about what PyTorch traces have and ours lack (ProfilerStep),
    # and about pandas features it uses that pandas deprecated.
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore", FutureWarning)

    failures = []
    with tempfile.TemporaryDirectory() as work:
        sample = os.path.join(work, "sample.db")
        subprocess.run([make_sample_trace, sample], check=True)
        rank1 = os.path.join(work, "vector_add_rank1.db")
        make_rank(os.path.join(examples, "vector_add.db"), rank1, 1, 2)
        # HTA rounds each start up and each end down to a whole microsecond:
        # the sample's operations of 100 ns come out negative, which its
        # temporal breakdown refuses; the recorded traces' are microseconds long.
        for trace, rank, temporal in ((os.path.join(examples, "vector_add.db"), 0, True),
                                      (os.path.join(examples, "um_bandwidth_h100.db"), 0, True),
                                      (sample, 0, False), (rank1, 1, True)):
            check(apptracer, trace, os.path.join(work, os.path.basename(trace) + ".hta"), rank,
                  failures, temporal)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    if not failures:
        print("ok: HTA reads the timelines of 4 traces")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
