#!/usr/bin/env python3
"""TensorBoard's PyTorch profiler plugin (PyPI `torch-tb-profiler`) loads the
Chrome JSON of `apptracer timeline --format chrome-json` as it loads the PyTorch
profiler's: each bundled trace, written as a run's `worker0.pt.trace.json`,
is read by the plugin's own loader into a profile with its Kernel and Trace
views, and the Kernel view has the kernels, launches and GPU time `apptracer
stats` counts. (Its Overview and Operator views are about PyTorch operators,
which a CUDA trace has none of: see docs/reading.md, Timelines.)

Usage: tb_profiler_test.py APPTRACER EXAMPLES_DIR

Exits 77 (reported by ctest as skipped) when `torch_tb_profiler` is not
importable: it brings TensorBoard, so the test tools do not install it.
"""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL", what, flush=True)


def stats_kernels(apptracer, trace):
    """name -> (launches, total GPU µs) of the GPU-timed kernels, as `apptracer stats` counts them."""
    output = subprocess.run([apptracer, "stats", trace, "--report", "kernels", "--format", "json"],
                            check=True, capture_output=True, text=True).stdout
    return {row["name"]: (row["count"] - row["untimed"], row["total_ns"] / 1000)
            for row in json.loads(output)["kernels"] if row["count"] > row["untimed"]}


def plugin_kernels(profile):
    """name -> (calls, total µs) of the plugin's Kernel view."""
    table = profile.kernel_table["data"]
    names = [column["name"] for column in table["columns"]]
    name, calls, total = (names.index(c) for c in ("Name", "Calls", "Total Duration (us)"))
    return {row[name]: (row[calls], row[total]) for row in table["rows"]}


def main():
    try:
        from torch_tb_profiler import io
        from torch_tb_profiler.profiler.loader import RunLoader
    except ImportError:
        print("SKIP: torch_tb_profiler is not installed (pip install torch-tb-profiler)")
        return SKIP
    apptracer, examples = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as work:
        for example in ("vector_add.db", "um_bandwidth_h100.db"):
            trace = os.path.join(examples, example)
            run_dir = os.path.join(work, example)
            os.mkdir(run_dir)
            subprocess.run([apptracer, "timeline", trace, "--format", "chrome-json", "-o",
                            os.path.join(run_dir, "worker0.pt.trace.json")],
                           check=True, capture_output=True)
            cache_dir = os.path.join(work, example + ".cache")
            os.mkdir(cache_dir)
            run = RunLoader(example, run_dir, io.Cache(cache_dir)).load()
            profile = run.get_profile("worker0", "default")
            expect(profile is not None, f"{example}: the plugin made no profile of worker0")
            if profile is None:
                continue
            views = [view.display_name for view in profile.views]
            expect("Kernel" in views and "Trace" in views, f"{example}: views {views}")
            expected = stats_kernels(apptracer, trace)
            shown = plugin_kernels(profile)
            expect(shown.keys() == expected.keys(),
                   f"{example}: kernels {sorted(shown)} are not {sorted(expected)}")
            for name, (launches, total_us) in expected.items():
                calls, shown_us = shown.get(name, (0, 0))
                expect(calls == launches, f"{example}: {name}: {calls} calls, not {launches}")
                # The plugin sums whole microseconds per launch: at most 1 µs off each.
                expect(abs(shown_us - total_us) <= launches,
                       f"{example}: {name}: {shown_us} µs, not {total_us:.1f}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("TensorBoard's profiler plugin reads the Chrome JSON: ok")
    return 0


if __name__ == "__main__":  # the plugin's loader starts processes that import this file
    sys.exit(main())
