#!/usr/bin/env python3
"""Soak runs of real frameworks under the tracer (GPU machine): each case
runs untraced once and traced REPEAT times, for thousands of steps, and is
held to what a user needs from a long run:

- no hang (each run under a time limit; a run past it has every thread's
  stack dumped to OUT and counts as a hang),
- the same stdout traced and untraced, every trace complete, no record
  dropped and no writer stall,
- trace bytes per step constant from step 100 on: the trace is cut into
  windows of 100 steps at the marks the programs print (marks.py), a
  window's bytes being its rows weighted by their table's bytes per row; the
  median window of the second half may cost at most 5% more per step than
  the first half's (a program's own period, a checksum every 1000 steps or
  torch.compile's guards now and then, makes some windows cost twice the
  others: medians, not means, so that where the period falls in the halves
  does not read as growth; growth is what a day-long run cannot afford),
- a PyTorch program's trace names its modules and ops (framework_ranges
  rows, recorded by default),
- the traced process's peak RSS and wall time beside untraced.

Repetition 0 runs alone: its wall time, peak RSS and bytes per step are the
measurements. With --parallel N the further repetitions run N at a time
(processes sharing the GPU and the cores): they are held to everything but
the wall time, which sharing makes meaningless, so that ten repetitions of
a long case fit in one run; sharing perturbs each process's timing, which
is what shakes out a rare hang.

    soak.py --apptracer BIN --out DIR [--repeat N] [--parallel N] [--only CASE,...] [--scale F]

Prints a line per run and a summary per case, writes OUT/soak.json; exit 0
when every run of every case that could run passed, 1 otherwise, 77 when no
case could run. SOAK_STACKS names a command printing a process's native
stacks (its pid appended), e.g. "eu-stack -p"; py-spy is used where installed.
"""
import argparse
import concurrent.futures
import json
import os
import re
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = re.compile(r"^soak-mark (\d+) (\d+)$")
LISTED = re.compile(r"^apptracer: trace written to (.*) \((complete|incomplete[^)]*)\)$")
PEAK = re.compile(r"^soak-peak-rss-kb (\d+)$")
GROWTH_TOLERANCE = 0.05  # bytes per step, the second half of the run against the first
MAX_EXTRA_RSS_MB = 512   # traced peak RSS over untraced


class Case:
    def __init__(self, name, modules, script, steps, launcher=(), gpus=1, env=None):
        self.name, self.modules, self.script, self.steps = name, modules, script, steps
        self.launcher, self.gpus = launcher, gpus
        self.env = {**os.environ, **(env or {})}

    def command(self, scale):
        steps = max(300, int(self.steps * scale))
        return [*self.launcher, os.path.join(HERE, self.script), str(steps)], steps


def torchrun(ranks):
    return ("torchrun", "--standalone", "--nproc_per_node", str(ranks))


CASES = [
    Case("transformer", ["torch", "transformers"], "transformer_train.py", 2000),
    Case("dataloader", ["torch"], "dataloader_train.py", 2000),
    Case("compile", ["torch", "triton"], "compile_replay.py", 5000),
    # XLA picks its GEMM algorithms by timing them, so a run's losses may
    # differ in the last digits from another's, traced or not: autotuning off.
    # Its default 75% of the GPU for one process would leave parallel
    # repetitions none.
    Case("jax", ["jax"], "jax_train.py", 2000,
         env={"XLA_FLAGS": "--xla_gpu_autotune_level=0", "XLA_PYTHON_CLIENT_MEM_FRACTION": "0.08"}),
    Case("cupy", ["cupy"], "cupy_churn.py", 3000),
    Case("fsdp", ["torch"], "fsdp_train.py", 1000, launcher=torchrun(2), gpus=2),
    # Where 4 or 8 GPUs are lent: every GPU a rank, fewer steps.
    Case("fsdp4", ["torch"], "fsdp_train.py", 300, launcher=torchrun(4), gpus=4),
    Case("fsdp8", ["torch"], "fsdp_train.py", 300, launcher=torchrun(8), gpus=8),
]


def has_modules(modules):
    probe = ("import importlib.util, sys; "
             "sys.exit(any(importlib.util.find_spec(m) is None for m in sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", probe, *modules]).returncode == 0


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def read(path):
    try:
        with open(path) as f:
            return f.read().replace("\0", " ").strip()
    except OSError:
        return "?"


def dump_stacks(pgid, where):
    """Every process of the hung run: each thread's name and wait, and stacks."""
    pids = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True).stdout.split()
    with open(where, "w") as out:
        for pid in pids:
            out.write(f"=== pid {pid}: {read(f'/proc/{pid}/cmdline')}\n")
            for task in sorted(os.listdir(f"/proc/{pid}/task")):
                base = f"/proc/{pid}/task/{task}"
                out.write(f"  {task} {read(base + '/comm')} wchan={read(base + '/wchan')}\n")
            tools = []
            if os.environ.get("SOAK_STACKS"):
                tools.append([*os.environ["SOAK_STACKS"].split(), pid])
            if shutil.which("py-spy"):
                tools.append(["py-spy", "dump", "--native", "--pid", pid])
            for tool in tools:
                try:
                    out.write(subprocess.run(tool, capture_output=True, text=True, timeout=120).stdout)
                except (OSError, subprocess.TimeoutExpired) as error:
                    out.write(f"{tool[0]}: {error}\n")
            out.flush()


def measured(command):
    """This script as a wrapper: runs `command`, then says on stderr the peak
    RSS of the largest process it and its descendants had."""
    code = subprocess.call(command)
    print(f"soak-peak-rss-kb {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}",
          file=sys.stderr)
    return code


def run(command, limit_s, stacks_file, env=None):
    """(exit code, or None when it hung; stdout; stderr; wall s; peak RSS MB;
    the run's start and end on the marks' clock)."""
    start = time.monotonic()
    start_ns = time.time_ns()
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--measure", "--", *command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env)
    try:
        stdout, stderr = proc.communicate(timeout=limit_s)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        dump_stacks(proc.pid, stacks_file)
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        code = None
    wall = time.monotonic() - start
    peaks = [int(m.group(1)) for m in map(PEAK.match, stderr.splitlines()) if m]
    return code, stdout, stderr, wall, (peaks[-1] / 1024 if peaks else 0.0), (start_ns, time.time_ns())


def phases(span, stderr):
    """Seconds before the first step mark (start-up: imports, CUDA, the
    tracer's start), between the first and the last (the steps) and after it
    (exit: the tracer's last records written)."""
    marks = [int(m.group(2)) for m in map(MARK.match, stderr.splitlines()) if m]
    if len(marks) < 2:
        return {}
    start, end = span
    return {"startup_s": round((marks[0] - start) / 1e9, 1), "steps_s": round((marks[-1] - marks[0]) / 1e9, 1),
            "exit_s": round((end - marks[-1]) / 1e9, 1)}


# The columns that place a row of a table in time, the first set one first.
# kernel_arg_sets and kernel_arg_words are placed by the first launch of
# their set; tables with no time (strings, devices) are left out.
TIME_COLUMNS = ["api_start_ns", "start_ns", "alloc_ns", "ns", "gpu_start_ns"]


def window_bytes(path, marks):
    """Bytes per step of each window between consecutive marks from step 100."""
    marks = [(step, ns) for step, ns in marks if step >= 100]
    if len(marks) < 3:
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        owner = dict(db.execute("SELECT name, tbl_name FROM sqlite_master"))
        try:
            table_size = {}
            for name, size in db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
                table_size[owner.get(name, name)] = table_size.get(owner.get(name, name), 0) + size
        except sqlite3.Error:  # no dbstat: every row weighs the file's mean
            table_size = None
        db.execute("CREATE TEMP TABLE windows (i INTEGER, lo INTEGER, hi INTEGER)")
        db.executemany("INSERT INTO windows VALUES (?, ?, ?)",
                       [(i, marks[i][1], marks[i + 1][1]) for i in range(len(marks) - 1)])
        db.execute("CREATE TEMP TABLE first_use AS SELECT arg_set_id AS id, MIN(api_start_ns) AS t "
                   "FROM kernels WHERE arg_set_id IS NOT NULL GROUP BY arg_set_id")
        total_rows = sum(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                         for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        totals = [0.0] * (len(marks) - 1)
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            rows = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            if not rows:
                continue
            if table == "kernel_arg_sets":
                times = "SELECT t FROM first_use"
            elif table == "kernel_arg_words":
                times = ("SELECT f.t FROM kernel_arg_words w JOIN first_use f ON f.id = w.arg_set_id")
            else:
                columns = [c[1] for c in db.execute(f"PRAGMA table_info({table})")]
                present = [c for c in TIME_COLUMNS if c in columns]
                if not present:
                    continue
                # A graph-launched kernel has GPU times but no call of its own.
                times = f"SELECT COALESCE({', '.join(present + ['NULL'])}) AS t FROM {table}"
            per_row = (table_size.get(table, 0) if table_size is not None
                       else os.path.getsize(path) * rows / total_rows) / rows
            counts = db.execute(f"SELECT w.i, COUNT(*) FROM ({times}) r JOIN windows w "
                                f"ON r.t >= w.lo AND r.t < w.hi GROUP BY w.i")
            for i, count in counts:
                totals[i] += count * per_row
        return [totals[i] / (marks[i + 1][0] - marks[i][0]) for i in range(len(totals))]
    finally:
        db.close()


def trace_meta(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()


def framework_range_count(path):
    """Rows of framework_ranges (PyTorch's modules and ops); 0 without the table."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute("SELECT COUNT(*) FROM framework_ranges").fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        db.close()


def soak_case(case, args, scale):
    """Runs one case; returns its record (every run's numbers and failures)."""
    command, steps = case.command(scale)
    work = os.path.join(args.out, case.name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    python = [sys.executable] if not case.launcher else []
    program = [*command[:len(case.launcher)], *python, *command[len(case.launcher):]]
    result = {"case": case.name, "steps": steps, "runs": [], "failures": []}
    fail = result["failures"].append
    code, plain_out, plain_err, plain_wall, plain_rss, plain_span = run(
        program, args.limit_s, os.path.join(work, "untraced-stacks.txt"), case.env)
    plain_phases = phases(plain_span, plain_err)
    result.update(untraced_wall_s=round(plain_wall, 1), untraced_peak_rss_mb=round(plain_rss),
                  untraced_phases=plain_phases)
    if code != 0:
        fail(f"untraced run failed ({code}): {plain_err.strip()[-400:]}")
        return result
    def traced_run(repetition):
        out = os.path.join(work, f"traced-{repetition}")
        os.makedirs(out)
        traced = [args.apptracer, "record", "-o", os.path.join(out, f"{case.name}-%p.db"), "--", *program]
        return out, run(traced, args.limit_s, os.path.join(out, "stacks.txt"), case.env)

    first = [traced_run(0)] if args.repeat > 0 else []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        rest = list(pool.map(traced_run, range(1, args.repeat)))
    for repetition, (out, (code, stdout, stderr, wall, rss, span)) in enumerate(first + rest):
        with open(os.path.join(out, "stderr.txt"), "w") as f:
            f.write(stderr)
        shared = repetition > 0 and args.parallel > 1
        entry = {"repetition": repetition, "wall_s": round(wall, 1), "peak_rss_mb": round(rss),
                 "extra_rss_mb": round(rss - plain_rss)}
        if shared:
            entry["shared_with"] = args.parallel - 1
        else:
            entry["wall_ratio"] = round(wall / plain_wall, 3)
            entry["phases"] = phases(span, stderr)
            if plain_phases.get("steps_s") and entry["phases"].get("steps_s"):
                entry["steps_ratio"] = round(entry["phases"]["steps_s"] / plain_phases["steps_s"], 3)
        result["runs"].append(entry)
        if code is None:
            fail(f"run {repetition}: HUNG past {args.limit_s} s (stacks in {out}/stacks.txt)")
            continue
        if code != 0:
            fail(f"run {repetition}: exit {code}: {stderr.strip()[-400:]}")
        elif stdout != plain_out:
            first = next((i for i, (a, b) in enumerate(zip(stdout.splitlines(), plain_out.splitlines()))
                          if a != b), min(len(stdout.splitlines()), len(plain_out.splitlines())))
            fail(f"run {repetition}: stdout differs from untraced from line {first + 1}: "
                 f"{stdout.splitlines()[first:first + 1]} vs {plain_out.splitlines()[first:first + 1]}")
        listed = [m.groups() for m in map(LISTED.match, stderr.splitlines()) if m]
        if not listed or any(status != "complete" for _, status in listed):
            fail(f"run {repetition}: traces not all complete: {listed or stderr.strip()[-300:]}")
        metas = {path: trace_meta(path) for path, _ in listed if os.path.exists(path)}
        for path, m in metas.items():
            if m.get("dropped_records", "0") != "0" or m.get("writer_stalls", "0") != "0":
                fail(f"run {repetition}: {os.path.basename(path)} dropped {m.get('dropped_records')} records, "
                     f"{m.get('writer_stalls')} writer stalls")
        main = max(metas, key=os.path.getsize) if metas else None
        if main:
            entry["trace_mb"] = round(os.path.getsize(main) / 2**20, 1)
            entry["producer_wait_ms"] = round(int(metas[main].get("producer_wait_ns", "0")) / 1e6)
            entry["finish_ms"] = {key[len("finish."):-len("_ms")]: int(value)
                                  for key, value in metas[main].items() if key.startswith("finish.")}
            # PyTorch's modules and ops are recorded by default: a torch
            # program's trace without one has lost them.
            entry["framework_ranges"] = framework_range_count(main)
            if "torch" in case.modules and case.env.get("APPTRACER_FRAMEWORK_CONTEXT", "") != "off" \
                    and entry["framework_ranges"] == 0:
                fail(f"run {repetition}: no framework ranges in {os.path.basename(main)}: "
                     "apptracer record names PyTorch's modules and ops by default")
        marks = [(int(a), int(b)) for a, b in (m.groups() for m in map(MARK.match, stderr.splitlines()) if m)]
        if main and repetition == 0:
            per_step = window_bytes(main, marks)
            entry["bytes_per_step"] = [round(b) for b in per_step]
            if len(per_step) >= 2:
                half = len(per_step) // 2
                growth = statistics.median(per_step[half:]) / statistics.median(per_step[:half]) - 1
                median = statistics.median(per_step)
                entry["bytes_per_step_growth"] = round(growth, 4)
                entry["bytes_per_step_spread"] = round(max(abs(b - median) for b in per_step) / median, 4)
                if growth > GROWTH_TOLERANCE:
                    fail(f"run {repetition}: the median window's bytes per step grew by {growth:.1%} from the "
                         f"first half of the run to the second (target {GROWTH_TOLERANCE:.0%}): {entry['bytes_per_step']}")
            else:
                fail(f"run {repetition}: too few step marks to cut the trace into windows")
        if rss - plain_rss > MAX_EXTRA_RSS_MB:
            fail(f"run {repetition}: peak RSS {rss:.0f} MB, untraced {plain_rss:.0f} MB "
                 f"(more than {MAX_EXTRA_RSS_MB} MB over)")
        if not args.keep:
            for path in metas:
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(path + suffix):
                        os.remove(path + suffix)
        print(f"soak {case.name} run {repetition}: {json.dumps(entry)}", flush=True)
    return result


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--measure" and sys.argv[2] == "--":
        return measured(sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apptracer", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default="")
    parser.add_argument("--parallel", type=int, default=1,
                        help="run repetitions after the first this many at a time")
    parser.add_argument("--scale", type=float, default=1.0, help="steps multiplied by this")
    parser.add_argument("--limit-s", type=int, default=540, help="a run longer than this hung")
    parser.add_argument("--keep", action="store_true", help="keep the traces")
    args = parser.parse_args()
    args.apptracer = os.path.abspath(args.apptracer)
    os.makedirs(args.out, exist_ok=True)
    wanted = set(filter(None, args.only.split(",")))
    gpus = gpu_count()
    results = []
    for case in CASES:
        if wanted and case.name not in wanted:
            continue
        if gpus < case.gpus or not has_modules(case.modules):
            print(f"soak {case.name}: skipped ({gpus} GPU(s); needs {case.gpus} and {case.modules})")
            continue
        result = soak_case(case, args, args.scale)
        results.append(result)
        state = "ok" if not result["failures"] else "FAILED: " + "; ".join(result["failures"])
        print(f"soak {case.name}: {result['steps']} steps, untraced {result.get('untraced_wall_s')} s "
              f"{result.get('untraced_peak_rss_mb')} MB; {state}", flush=True)
    with open(os.path.join(args.out, "soak.json"), "w") as f:
        json.dump(results, f, indent=1)
    if not results:
        return 77
    return 0 if all(not r["failures"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
