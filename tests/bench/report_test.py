#!/usr/bin/env python3
"""bench/report.py writes bench/RESULTS.md again from its sections: nothing
outside a section may be lost, unmeasured sections stay as and where they
were, and a section new to the file goes where ORDER puts it.

    report_test.py REPORT_PY RESULTS_MD
"""
import os
import subprocess
import sys
import tempfile
import unittest

REPORT = sys.argv.pop(1) if len(sys.argv) > 1 else "bench/report.py"
RESULTS = sys.argv.pop(1) if len(sys.argv) > 1 else "bench/RESULTS.md"
HEADER = """# apptracer benchmark results

Written by `bench/run.sh` (see docs/development.md, Benchmarks); each section
says where, when and at which commit it was measured. Benchmarks print and
assert nothing: targets are reported, met or not.
"""


def section(name, body):
    return f"\n<!-- section {name} -->\n{body}<!-- end {name} -->\n"


class Report(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="report_test_")
        self.results = os.path.join(self.dir.name, "RESULTS.md")
        self.log = os.path.join(self.dir.name, "log")

    def tearDown(self):
        self.dir.cleanup()

    def run_report(self, text, log=""):
        with open(self.results, "w") as f:
            f.write(text)
        with open(self.log, "w") as f:
            f.write(log)
        done = subprocess.run([sys.executable, REPORT, "--log", self.log, "--results", self.results,
                               "--device", "a CPU", "--date", "today", "--commit", "abc"],
                              capture_output=True, text=True)
        with open(self.results) as f:
            return done, f.read()

    def test_the_repositorys_results_are_written_back_unchanged(self):
        with open(RESULTS) as f:
            text = f.read()
        done, after = self.run_report(text)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(after, text, "text outside a section, or sections moved")

    def test_text_outside_every_section_is_refused_and_the_file_left_as_it_was(self):
        text = HEADER + section("real", "## Real\n") + "\n## Loose notes\n\nwritten by hand\n" + \
            section("soak", "## Soak\n")
        done, after = self.run_report(text)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("line 11 ", done.stderr)  # "## Loose notes"
        self.assertEqual(after, text)

    def test_a_measured_section_new_to_the_file_goes_where_order_puts_it(self):
        text = HEADER + section("soak", "## Soak\n") + section("real", "## Real\n") + \
            section("analyzer", "## Analyzer\n")
        log = "result store.mixed.t1.records_per_s 1200000\n"
        done, after = self.run_report(text, log)
        self.assertEqual(done.returncode, 0, done.stderr)
        names = [line.split()[2] for line in after.splitlines() if line.startswith("<!-- section ")]
        self.assertEqual(names, ["soak", "real", "store", "analyzer"])
        self.assertIn("1.20M", after)


if __name__ == "__main__":
    unittest.main()
