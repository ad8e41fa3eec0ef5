#!/usr/bin/env python3
"""Runs one test case (an app, its arguments, an injection route) with and
without the tracer, and asserts on the trace.

    check_trace.py CASE --apps DIR --apptracer PATH --library PATH --other-subscriber PATH [--keep DIR]

The assertions are the specification of what capture must record for each
app: exact counts, bytes, kinds and resolved allocations. They live in
trace_checks/, one module per family of test apps, each with the cases of
its apps; this runner only runs a case. The app's output and exit code must
be the same traced and untraced. Exits 77 (skipped) where there is no CUDA
GPU, 0 when every assertion holds, 1 otherwise.
"""
import argparse
import ctypes
import glob
import os
import sys
import tempfile

from trace_checks import (base, capture, diagnosis, exact, framework_allocators, graphs, unified_memory,
                          whatif)
from trace_checks.base import Checker, Trace, common_checks, run, traced_command

SKIPPED = 77


def gpu_count():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    except OSError:
        return 0


def comparable_stdout(case, stdout):
    if not case.timing_lines:
        return stdout
    return "".join(line for line in stdout.splitlines(keepends=True)
                   if not line.startswith(case.timing_lines))


# Each family of test apps registers its own cases.
CASES = {**capture.CASES, **exact.CASES, **graphs.CASES, **whatif.CASES, **unified_memory.CASES,
         **framework_allocators.CASES, **diagnosis.CASES}

# Cases whose check also reads the program's standard output.
NEEDS_STDOUT = {"kernel_args", "pytorch_train_step", "cupy_pool", "jax_arrays"}

# Cases whose check takes every trace the run wrote, not exactly one.
MULTI_TRACE = {"forking", "forking_term", "exec_self"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("--apps", required=True, help="directory holding the test apps")
    parser.add_argument("--apptracer", required=True, help="the apptracer program")
    parser.add_argument("--library", required=True, help="libapptracer.so")
    parser.add_argument("--other-subscriber", required=True,
                        help="a library that takes CUPTI first (the bench's bare subscriber)")
    parser.add_argument("--keep", help="directory to keep the trace in")
    args = parser.parse_args()
    base.APPTRACER = args.apptracer
    base.ARGS = args

    if gpu_count() == 0:
        print(f"SKIPPED {args.case}: no CUDA GPU on this machine")
        return SKIPPED
    case = CASES[args.case]
    program = os.path.join(os.path.abspath(args.apps), case.app or args.case)
    out_dir = args.keep or tempfile.mkdtemp(prefix=f"apptracer-{args.case}-")
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, f"{args.case}-*.db*")):
        os.remove(old)

    plain = run([program] + case.args)
    command, env = traced_command(case, args, program, os.path.join(out_dir, f"{args.case}-%p.db"))
    traced = run(command, env)
    if plain[0] == SKIPPED and traced[0] == SKIPPED:
        print(f"SKIPPED {args.case}: {plain[1].strip()}")
        return SKIPPED
    c = Checker(args.case)
    c.equal(traced[0], plain[0], "exit code traced vs untraced")
    c.equal(comparable_stdout(case, traced[1]), comparable_stdout(case, plain[1]),
            "stdout traced vs untraced")
    paths = sorted(glob.glob(os.path.join(out_dir, f"{args.case}-*.db")))
    traces = [Trace(p) for p in paths]
    if case.route == "cupti_in_use":
        ours = [line for line in traced[2].splitlines() if line.startswith("apptracer:")]
        c.equal(len(ours), 1, "one line from apptracer")
        c.expect(ours and "already in use" in ours[0], f"it says CUPTI is in use: {ours}")
        c.equal(paths, [], "no trace written")
    else:
        # `apptracer record` names the traces it wrote (and how --exact ran); everything
        # else is the program's.
        program_stderr = "".join(line for line in traced[2].splitlines(keepends=True)
                                 if not line.startswith(("apptracer: trace written to ",
                                                         "apptracer: --exact")))
        c.equal(program_stderr, plain[2], "stderr traced vs untraced")
        if case.route == "record":
            # "apptracer: trace written to PATH (complete)" or "(incomplete: signal 9)"
            prefix = "apptracer: trace written to "
            named = sorted(line[len(prefix):].rsplit(" (", 1)[0] for line in traced[2].splitlines()
                           if line.startswith(prefix))
            c.equal(named, paths, "apptracer record names every trace it wrote")
        if args.case in MULTI_TRACE:
            case.check(c, traces)
        elif len(traces) != 1:
            c.expect(False, f"expected one trace, found {paths}")
        else:
            if case.common:
                common_checks(c, traces[0])
            if args.case in NEEDS_STDOUT:
                case.check(c, traces[0], traced[1])
            else:
                case.check(c, traces[0])
    for failure in c.failures:
        print(f"FAIL {args.case}: {failure}")
    if traced[2]:
        print(f"(traced stderr) {traced[2].strip()}")
    if case.timing_lines:
        for label, result in (("untraced", plain), ("traced", traced)):
            timings = [line for line in result[1].splitlines() if line.startswith(case.timing_lines)]
            print(f"({label}) " + "; ".join(timings))
    print(f"{args.case}: {'ok' if not c.failures else 'FAILED'} ({len(paths)} trace(s) in {out_dir})")
    return 0 if not c.failures else 1


if __name__ == "__main__":
    sys.exit(main())
