"""Where the tracer's own time goes in a real program, per step (GPU): runs
the workload of real_steps.py under `apptracer record --self-cost` with N
and 3N steps and divides the difference of each site's totals (meta
self_cost) by 2N, so loading, warm-up and the final write cancel out.
Prints, per site, "result real-WORKLOAD.self.SITE.us_per_step V" and
".calls_per_step V" lines for bench/report.py, and the rows the writer
stored again per step because their GPU activity came after they were
stored (".rows_stored_again_per_step"), and the rows each table gained per
step (".rows.TABLE.per_step").

    python3 self_cost.py DIST WORKLOAD STEPS WARMUP
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile


def totals(apptracer, workload, steps, warmup, work):
    trace = os.path.join(work, f"{workload}-{steps}.db")
    program = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_steps.py"),
               workload, str(steps), str(warmup)]
    subprocess.run([apptracer, "record", "--self-cost", "-f", "-o", trace, "--", *program],
                   check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(trace)
    try:
        found = json.loads(db.execute("SELECT value FROM meta WHERE key = 'self_cost'").fetchone()[0])
        again = db.execute("SELECT value FROM meta WHERE key = 'rows_stored_again'").fetchone()
        found["rows_stored_again"] = int(again[0]) if again else None
        found["rows"] = {key[len("rows."):]: int(value) for key, value in
                         db.execute("SELECT key, value FROM meta WHERE key LIKE 'rows.%'")}
        return found
    finally:
        db.close()


def main():
    dist, workload, steps, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    apptracer = os.path.join(dist, "bin", "apptracer")
    with tempfile.TemporaryDirectory() as work:
        short = totals(apptracer, workload, steps, warmup, work)
        long = totals(apptracer, workload, 3 * steps, warmup, work)
    per_step = 2 * steps
    for site, value in long.items():
        if not isinstance(value, dict) or "calls" not in value:
            continue
        calls = (value["calls"] - short[site]["calls"]) / per_step
        us = (value["ns"] - short[site]["ns"]) / per_step / 1000
        print(f"result real-{workload}.self.{site}.us_per_step {us:.1f}")
        print(f"result real-{workload}.self.{site}.calls_per_step {calls:.0f}")
    if long["rows_stored_again"] is not None:
        again = (long["rows_stored_again"] - short["rows_stored_again"]) / per_step
        print(f"result real-{workload}.self.rows_stored_again_per_step {again:.0f}")
    for table, rows in long["rows"].items():
        gained = (rows - short["rows"].get(table, 0)) / per_step
        if gained:
            print(f"result real-{workload}.self.rows.{table}.per_step {gained:.0f}")
    for thread in ("writer", "inserter"):
        for key in ("cpu", "user", "system"):
            if f"{thread}_{key}_ns" in long:
                used = (long[f"{thread}_{key}_ns"] - short[f"{thread}_{key}_ns"]) / per_step / 1000
                print(f"result real-{workload}.self.{thread}_{key}.us_per_step {used:.1f}")
        for key in ("minor_faults", "major_faults", "voluntary_switches", "involuntary_switches"):
            if f"{thread}_{key}" in long:
                count = (long[f"{thread}_{key}"] - short[f"{thread}_{key}"]) / per_step
                print(f"result real-{workload}.self.{thread}_{key}.per_step {count:.0f}")
    print(f"result real-{workload}.self.timer_ns {long['timer_ns']}")


if __name__ == "__main__":
    main()
