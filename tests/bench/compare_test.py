#!/usr/bin/env python3
"""bench/compare.sh: a program that runs several workloads prints
"KEY=VALUE ..." on its last line, and each workload is compared as NAME-KEY,
each variant's median with its ratio to the first variant's.

    compare_test.py COMPARE_SH
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

COMPARE = sys.argv.pop(1) if len(sys.argv) > 1 else "bench/compare.sh"


def compare(rounds, variants, program, env=None):
    # The variants need no installed tree: untraced runs the program alone,
    # torch-profiler only sets an environment variable the program reads.
    out = subprocess.run(["bash", COMPARE, "t", "/nonexistent", str(rounds), variants, "us", "--",
                          "sh", "-c", program], check=True, capture_output=True, text=True,
                         env={**os.environ, **(env or {})}).stdout
    results = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "result":
            results[words[1]] = float(words[2])
    return out, results


class SeveralWorkloads(unittest.TestCase):
    def test_each_workload_is_a_series_of_its_own(self):
        program = 'if [ -n "$BENCH_TORCH_PROFILER" ]; then echo "a=30 b=8"; else echo "a=10 b=4"; fi'
        out, results = compare(3, "untraced,torch-profiler", program)
        self.assertEqual(results["t-a.untraced.per_op"], 10)
        self.assertEqual(results["t-a.torch-profiler.per_op"], 30)
        self.assertEqual(results["t-b.untraced.per_op"], 4)
        self.assertEqual(results["t-b.torch-profiler.per_op"], 8)
        self.assertIn("t-a.untraced.wall_ms", results)
        self.assertRegex(out, r"torch-profiler +30 30 30 +-> 30 +x3\.00")
        self.assertRegex(out, r"torch-profiler +8 8 8 +-> 8 +x2\.00")

    def test_one_value_keeps_the_name(self):
        _, results = compare(2, "untraced", "echo 7.5")
        self.assertEqual(results["t.untraced.per_op"], 7.5)

    def test_no_number_compares_wall_time_only(self):
        _, results = compare(1, "untraced", "echo done")
        self.assertNotIn("t.untraced.per_op", results)
        self.assertIn("t.untraced.wall_ms", results)


class AnotherInstall(unittest.TestCase):
    def test_apptracer_from_preloads_that_installs_library(self):
        program = 'case "$LD_PRELOAD" in /other/lib/libapptracer.so) echo 1 ;; *) echo 0 ;; esac'
        _, results = compare(1, "untraced,apptracer-from=/other", program)
        self.assertEqual(results["t.untraced.per_op"], 0)
        self.assertEqual(results["t.apptracer-from=/other.per_op"], 1)


class BusyNeighbours(unittest.TestCase):
    def test_spinners_run_beside_the_program_and_end_with_it(self):
        # The program counts the spinning shells running while it runs.
        program = "sleep 0.3; pgrep -c -x -f 'bash -c while :; do :; done' || true"
        _, results = compare(1, "untraced,untraced-busy=2", program)
        self.assertEqual(results["t.untraced.per_op"], 0)
        self.assertEqual(results["t.untraced-busy=2.per_op"], 2)
        left = subprocess.run(["pgrep", "-x", "-f", "bash -c while :; do :; done"], capture_output=True, text=True)
        self.assertEqual(left.stdout, "")


class Rounds(unittest.TestCase):
    def test_spread_is_the_largest_round_over_the_smallest(self):
        # Each round appends a line to a file and prints its count: 1, 2, 4.
        fd, state = tempfile.mkstemp(prefix="compare_test_")
        os.close(fd)
        try:
            program = f'echo x >> {state}; n=$(wc -l < {state}); [ "$n" -eq 3 ] && n=4; echo $n'
            out, _ = compare(3, "untraced", program)
            self.assertRegex(out, r"untraced +1 2 4 +-> 2 +x1\.00 +spread 4\.00")
        finally:
            os.remove(state)

    def test_fastest_round_is_compared_with_the_first_variants_fastest(self):
        # Runs 1-6 in order, two variants interleaved: untraced gets 10, 30,
        # 50 and torch-profiler 25, 15, 60 (medians 30 and 25, fastest 10 and 15).
        fd, state = tempfile.mkstemp(prefix="compare_test_")
        os.close(fd)
        try:
            program = (f'echo x >> {state}; n=$(wc -l < {state}); '
                       'set -- 10 25 30 15 50 60; shift $((n - 1)); echo $1')
            out, results = compare(3, "untraced,torch-profiler", program)
            self.assertEqual(results["t.untraced.fastest"], 10)
            self.assertEqual(results["t.torch-profiler.fastest"], 15)
            self.assertEqual(results["t.torch-profiler.per_op"], 25)
            self.assertRegex(out, r"torch-profiler +25 15 60 +-> 25 +x0\.83 +spread 4\.00 +fastest 15 x1\.50")
        finally:
            os.remove(state)

    @unittest.skipUnless(shutil.which("taskset") and hasattr(os, "sched_getaffinity"), "needs taskset")
    def test_bench_cpus_runs_every_variant_on_those_cores(self):
        core = min(os.sched_getaffinity(0))
        program = 'python3 -c "import os; print(len(os.sched_getaffinity(0)))"'
        out, results = compare(2, "untraced,torch-profiler", program, {"BENCH_CPUS": str(core)})
        self.assertEqual(results["t.untraced.per_op"], 1)
        self.assertEqual(results["t.torch-profiler.per_op"], 1)
        self.assertIn(f"every variant on cores {core}", out)


if __name__ == "__main__":
    unittest.main()
