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

    def test_the_launch_section_says_what_tracing_adds_to_the_hosts_work_between_launches(self):
        # A launch alone gains 1,600 ns traced; after the host's own work it
        # gains 3,000: the other 1,400 ns are the host's work, 7% of 20 us.
        log = "".join(f"result {key} {value}\n" for key, value in (
            ("launch.untraced.per_op", 4000), ("launch.bare.per_op", 4800), ("launch.apptracer.per_op", 5600),
            ("launch-after-work.untraced.per_op", 20000), ("launch-after-work.bare.per_op", 21000),
            ("launch-after-work.apptracer.per_op", 23000)))
        done, after = self.run_report(HEADER, log)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("| the same launch after the host's own work | 20,000 | 21,000 | 23,000 |", after)
        self.assertIn("what tracing adds to the host's own work between launches (its added cost after work, "
                      "less a launch's alone): 1,400 ns, 7.0% of the untraced loop", after)


if __name__ == "__main__":
    unittest.main()
