#!/usr/bin/env python3
"""bench/repeat_steps on the bundled PyTorch trace: the long trace has the
steps asked for, each a step later than the one before, keeps no more
memory live than the short one, and the analyzer reads it; a run that fails leaves no output behind, and an existing output
is replaced only with --force.

    repeat_steps_test.py REPEAT_STEPS APPTRACER EXAMPLE_TRACE
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL", what, flush=True)


def steps(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute("SELECT r.start_ns, r.end_ns FROM nvtx_ranges r JOIN strings s "
                      "ON s.id = r.name_id WHERE s.text = 'step' ORDER BY r.start_ns").fetchall()
    db.close()
    return rows


def live_at_end(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    count = db.execute("SELECT count(*) FROM sub_allocations WHERE free_ns IS NULL").fetchone()[0]
    db.close()
    return count


def main():
    repeat_steps, apptracer, example = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "long.db")
        made = subprocess.run([repeat_steps, example, out, "--steps", "45"], capture_output=True,
                              text=True)
        expect(made.returncode == 0, f"repeat_steps failed: {made.stderr.strip()}")
        if made.returncode == 0:
            short, long = steps(example), steps(out)
            expect(len(long) == 45, f"{len(long)} steps, want 45")
            expect(all(b[0] >= a[1] for a, b in zip(long, long[1:])),
                   "a repeated step starts before the one before it ends")
            expect(long[:len(short)] == short, "the recorded steps moved")

            stats = subprocess.run([apptracer, "stats", out, "--report", "kernels", "--format",
                                    "csv"], capture_output=True, text=True)
            expect(stats.returncode == 0, f"apptracer stats on the long trace: {stats.stderr}")

        again = subprocess.run([repeat_steps, example, out, "--steps", "40"], capture_output=True,
                               text=True)
        expect(again.returncode != 0 and "--force" in again.stderr,
               f"an existing output was not refused: {again.stderr.strip()}")
        forced = subprocess.run([repeat_steps, example, out, "--steps", "40", "--force"],
                                capture_output=True, text=True)
        expect(forced.returncode == 0 and len(steps(out)) == 40,
               f"--force did not replace the output: {forced.stderr.strip()}")

        # A block the last step leaves live (held into the next step) is
        # handed out again by the next repetition, not kept once per one.
        held = os.path.join(work, "held.db")
        shutil.copy(example, held)
        db = sqlite3.connect(held)
        last_start = steps(example)[-1][0]
        db.execute("UPDATE sub_allocations SET free_ns = NULL, free_requested_ns = NULL WHERE id = "
                   "(SELECT min(id) FROM sub_allocations WHERE alloc_ns >= ?)", (last_start,))
        db.commit()
        db.close()
        held_long = os.path.join(work, "held_long.db")
        made = subprocess.run([repeat_steps, held, held_long, "--steps", "45"], capture_output=True,
                              text=True)
        expect(made.returncode == 0 and live_at_end(held_long) == live_at_end(held),
               f"{live_at_end(held_long)} blocks live at the end of the long trace, want "
               f"{live_at_end(held)}: {made.stderr.strip()}")
        os.remove(held)
        os.remove(held_long)

        failed = os.path.join(work, "failed.db")
        bad = subprocess.run([repeat_steps, example, failed, "--steps", "45", "--range", "no such"],
                             capture_output=True, text=True)
        expect(bad.returncode != 0 and "no such" in bad.stderr,
               f"an unknown range was not one error: {bad.stderr.strip()}")
        expect(sorted(os.listdir(work)) == ["long.db"],
               f"a failed run left files behind: {sorted(os.listdir(work))}")
    print("repeat_steps: ok" if not failures else f"repeat_steps: {len(failures)} FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
