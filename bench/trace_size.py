"""How big a trace grows per kernel launch, on the PyTorch MLP training steps.

Records bench/pytorch_steps.py twice under `apptracer record`, with few and
with many steps: a trace's fixed part (meta, strings, the process's start,
set-up and warm-up) weighs on a short run, so the number that says what a
long run costs is the marginal one, (size_many - size_few) / (launches_many -
launches_few). Per table too, from SQLite's dbstat where the build has it.

    trace_size.py APPTRACER FEW_STEPS MANY_STEPS WORK_DIR

Prints "result trace-size.KEY VALUE" lines for bench/report.py.
"""
import os
import sqlite3
import subprocess
import sys


def record(apptracer, steps, work):
    path = os.path.join(work, f"trace-size-{steps}.db")
    subprocess.run([apptracer, "record", "-f", "-o", path, "--", sys.executable,
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch_steps.py"),
                    str(steps), "0"], check=True, stdout=subprocess.DEVNULL)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    launches = db.execute("SELECT count(*) FROM kernels").fetchone()[0]
    try:
        tables = dict(db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    except sqlite3.Error:
        tables = {}
    db.close()
    return os.path.getsize(path), launches, tables


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[-3].strip())
    apptracer, few, many, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    size_few, launches_few, tables_few = record(apptracer, few, work)
    size_many, launches_many, tables_many = record(apptracer, many, work)
    print(f"{few} steps: {size_few:,} bytes, {launches_few:,} launches; "
          f"{many} steps: {size_many:,} bytes, {launches_many:,} launches")
    added = launches_many - launches_few
    if added <= 0:
        sys.exit("trace_size: the longer run launched no more kernels")
    print(f"result trace-size.launches {launches_many}")
    print(f"result trace-size.bytes_per_launch {size_many / launches_many:.1f}")
    print(f"result trace-size.marginal_bytes_per_launch {(size_many - size_few) / added:.1f}")
    grown = {name: tables_many.get(name, 0) - tables_few.get(name, 0) for name in tables_many}
    for name, bytes_ in sorted(grown.items(), key=lambda item: -item[1])[:8]:
        if bytes_ > 0:
            print(f"result trace-size.table.{name} {bytes_ / added:.1f}")


if __name__ == "__main__":
    main()
