#!/usr/bin/env python3
"""bench/heap_peak.py replays a heaptrack record to its heap peak and sums
what is live then by site; with --after, the peak of a later phase.

    heap_peak_test.py HEAP_PEAK_PY
"""
import os
import subprocess
import sys
import tempfile
import unittest

HEAP_PEAK = sys.argv.pop(1) if len(sys.argv) > 1 else "bench/heap_peak.py"

# Two sites under /src: `alloc` (1 MiB blocks) and `main` (a 2 MiB block).
# Live: 1, 3, 2, 3, 4 (the peak, after the 5th event), 2 MiB.
RECORD = """v 10400 3
X program
s 5 alloc
s b /src/a.cpp
s 4 main
i 1000 1 1 2 a
i 2000 1 3 2 14
t 1 2
t 2 0
a 100000 1
a 200000 2
+ 0
+ 1
- 0
+ 0
+ 0
- 1
"""


class HeapPeak(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="heap_peak_test_")
        self.record = os.path.join(self.dir.name, "record")
        with open(self.record, "w") as f:
            f.write(RECORD)

    def tearDown(self):
        self.dir.cleanup()

    def run_tool(self, *args):
        done = subprocess.run([sys.executable, HEAP_PEAK, self.record, "--under", "/src", *args],
                              capture_output=True, text=True, check=True)
        return done.stdout.splitlines()

    def test_what_is_live_at_the_peak_by_site_innermost_frame_first(self):
        out = self.run_tool()
        self.assertEqual(out[0], "peak 4.0 MiB at event 5 of 6")
        self.assertEqual(out[1:], ["      2.0 MiB  alloc@a.cpp:10 < main@a.cpp:20",
                                   "      2.0 MiB  main@a.cpp:20"])

    def test_a_later_phase_has_its_own_peak(self):
        out = self.run_tool("--after", "6")
        self.assertEqual(out[0], "peak 2.0 MiB at event 6 of 6")
        self.assertEqual(out[1:], ["      2.0 MiB  alloc@a.cpp:10 < main@a.cpp:20"])

    def test_one_frame_names_a_site(self):
        self.assertEqual(self.run_tool("--frames", "1")[1], "      2.0 MiB  alloc@a.cpp:10")

    def test_a_missing_record_is_one_line(self):
        done = subprocess.run([sys.executable, HEAP_PEAK, self.record + ".none"], capture_output=True, text=True)
        self.assertNotEqual(done.returncode, 0)
        self.assertEqual(done.stderr.strip().count("\n"), 0)
        self.assertIn("no such record", done.stderr)


if __name__ == "__main__":
    unittest.main()
