#!/usr/bin/env python3
"""Real frameworks under the tracer (GPU machine): each program runs untraced
and under `apptracer record`; exit code and stdout must be identical, every
process must leave a complete trace, and each case's trace must hold what the
program did (counts, kinds, GPU times).

    framework_suite.py --apptracer BIN [--keep DIR] [CASE ...]

Exit 0: all ran cases passed; 1: a failure; 77: nothing could run (no GPU or
no framework). Cases whose framework is missing are reported as skipped.
"""
import argparse
import importlib.util
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "frameworks")


class Trace:
    """One process's trace, read-only, with its enum names."""

    def __init__(self, path, apptracer):
        self.path, self.apptracer = path, apptracer
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.meta = dict(self.db.execute("SELECT key, value FROM meta"))
        self.enums = {(e, n): v for e, v, n in self.db.execute("SELECT enum, value, name FROM enum_values")}

    def one(self, sql, *args):
        return self.db.execute(sql, args).fetchone()[0]

    def enum(self, enum, name):
        return self.enums[(enum, name)]

    def kernels(self):
        return self.one("SELECT COUNT(*) FROM kernels")

    def untimed_kernels(self):
        return self.one("SELECT COUNT(*) FROM kernels WHERE gpu_start_ns IS NULL")

    def kernel_names(self):
        return [n for (n,) in self.db.execute(
            "SELECT DISTINCT s.text FROM kernels k JOIN strings s ON s.id = COALESCE(k.demangled_id, k.name_id)")]

    def copies(self, kind):
        return self.one("SELECT COUNT(*) FROM memcpys WHERE kind = ?", self.enum("copy_kind", kind))

    def allocations(self, kind):
        return self.one("SELECT COUNT(*) FROM allocations WHERE kind = ?", self.enum("alloc_kind", kind))

    def resolved_arg_words(self):
        return self.one("SELECT COUNT(*) FROM kernel_args WHERE alloc_id IS NOT NULL")

    def analyzed(self, *command):
        """What `apptracer COMMAND... TRACE --format json` prints, or None."""
        done = subprocess.run([self.apptracer, *command, "--format", "json", self.path],
                              capture_output=True, text=True, timeout=600)
        return json.loads(done.stdout) if done.returncode == 0 else None


class Case:
    """`main_uses_cuda`: the program's own process records something (else only
    its workers leave traces). `workers_terminated`: its workers are ended by
    SIGTERM (multiprocessing's Pool): their traces say so, flushed first."""
    def __init__(self, name, modules, check, timeout=600, main_uses_cuda=True,
                 workers_terminated=False):
        self.name, self.modules, self.check, self.timeout = name, modules, check, timeout
        self.main_uses_cuda, self.workers_terminated = main_uses_cuda, workers_terminated


def main_trace(traces):
    """The program's own process: the one whose parent left no trace (forked
    workers share its command line, spawned ones are its children)."""
    pids = {t.meta.get("pid") for t in traces}
    roots = [t for t in traces if t.meta.get("ppid") not in pids]
    return roots[0] if len(roots) == 1 else None


def with_kernels(traces):
    return [t for t in traces if t.kernels() > 0]


def check_train(expect, traces, main):
    expect(main.kernels() >= 30 * 10, f"kernels for 30 steps ({main.kernels()})")
    expect(any("BFloat16" in n or "bf16" in n for n in main.kernel_names()), "bf16 kernels under autocast")
    expect(main.copies("DtoH") >= 30, f"loss.item() copies DtoH ({main.copies('DtoH')})")
    expect(main.resolved_arg_words() > 0, "kernel arguments resolved to allocations")


def check_dataloader(expect, traces, main):
    # The workers only read and collate on the CPU: they record nothing, and a
    # process that records nothing leaves no file.
    expect(all(t is main or (t.kernels() == 0 and t.copies("HtoD") == 0) for t in traces),
           f"the GPU work is the main process's ({len(traces)} traces)")
    expect(main.copies("HtoD") >= 32, f"HtoD copies of 32 batches ({main.copies('HtoD')})")
    pinned = main.one("SELECT COUNT(*) FROM memcpys WHERE kind = ? AND src_memory = ?",
                      main.enum("copy_kind", "HtoD"), main.enum("memory_kind", "pinned"))
    expect(pinned >= 32, f"the batches come from pinned memory ({pinned})")


def check_compile(expect, traces, main):
    names = [n for t in traces for n in t.kernel_names()]
    expect(any("triton" in n for n in names), "inductor's Triton kernels recorded")


def check_jax(expect, traces, main):
    expect(main.kernels() >= 20, f"kernels of 20 jitted steps ({main.kernels()})")


def check_jax_train(expect, traces, main):
    expect(main.kernels() >= 4 * 10, f"kernels of 40 jitted training steps ({main.kernels()})")
    expect(main.resolved_arg_words() > 0, "kernel arguments resolved to allocations")
    # Its steps are found among XLA's autotuning trials, four compiles, and the
    # loss computed again op by op after the loop.
    check_training(40)(expect, traces, main)


def check_cupy(expect, traces, main):
    expect("scale" in main.kernel_names(), "the RawKernel recorded by name")
    expect(main.allocations("device") >= 1, "the pool's device memory recorded")


def check_triton(expect, traces, main):
    expect("add" in main.kernel_names(), "the Triton kernel recorded by name")


def check_pool(expect, traces, main):
    workers = with_kernels(traces)
    expect(len(workers) >= 2, f"the CUDA workers' traces hold their kernels ({len(workers)})")
    expect(all(t.meta.get("end_reason") in (None, f"signal {int(signal.SIGTERM)}") for t in traces),
           "workers ended by the pool's SIGTERM, or normally")


def check_subprocess(expect, traces, main):
    expect(main.meta.get("end_reason") is None, f"the parent's trace not ended by a child's exec ({main.meta.get('end_reason')})")
    expect(main.kernels() >= 1, "the parent's kernel after the children")


def check_sigint(expect, traces, main):
    expect(main.kernels() >= 50, f"the loop's kernels up to Ctrl-C ({main.kernels()})")


def check_ipc(expect, traces, main):
    imported = [t for t in traces if t.allocations("ipc import") > 0]
    expect(len(imported) == 1, f"the child records the imported memory as an IPC import ({len(imported)})")
    if imported:
        child = imported[0]
        on_import = child.one(
            "SELECT COUNT(*) FROM kernel_args w JOIN allocations a ON a.id = w.alloc_id WHERE a.kind = ?",
            child.enum("alloc_kind", "ipc import"))
        expect(on_import >= 1, f"the child's kernel arguments resolve to the imported memory ({on_import})")



def check_training(steps, pytorch=False):
    """Training of a shape the project's own programs lack: the steps found
    from the launches alone (the program marks none) are the steps it ran; the
    diagnosis shows at most ten findings, start-up's below every steady-state
    one, none saying memory was never used; in a PyTorch program nearly every
    launch names its op. The share
    that names a module is printed: a loss or an optimizer outside the model
    has none, and backward launches are named from the forward's."""
    def check(expect, traces, main):
        summary = (main.analyzed("stats", "--report", "steps") or {}).get("step_summary") or [{}]
        found, source = summary[0].get("steps"), summary[0].get("found_from", "")
        expect(source.startswith("the repeating launch sequence") and found == steps,
               f"steps found from the launches: {found} of the {steps} run ({source})")
        findings = (main.analyzed("diagnose") or {}).get("findings")
        rules = [f["rule"] + (" (start-up)" if f["startup"] else "") for f in findings or []]
        expect(findings is not None and len(rules) <= 10, f"at most ten findings shown ({rules})")
        steady_after = [f["rule"] for i, f in enumerate(findings or []) if not f["startup"] and not f["minor"] and
                        any(earlier["startup"] for earlier in findings[:i])]
        expect(not steady_after, f"start-up ranked below the steady state ({rules})")
        # These programs use all they allocate: the libraries' workspaces and
        # a compiler's scratch are theirs, not the program's waste.
        unused = [f["what"] for f in findings or [] if not f["startup"] and
                  f["rule"] in ("allocation_never_used", "memory_never_used")]
        expect(not unused, f"no memory of the program's said never used ({unused[:2]})")
        if not pytorch:
            return
        for name in ("module", "op"):
            rows = (main.analyzed("stats", "--report", name + "s") or {}).get(name + "s", [])
            launches = sum(row["launches"] for row in rows)
            named = launches - sum(row["launches"] for row in rows if row[name] == "(none)")
            share = f"{named} of {launches}, {named / launches:.1%}" if launches else "no launches"
            expect(launches > 0 and named >= 0.95 * launches, f">= 95% of launches name their {name} ({share})")
    return check

CASES = [
    Case("torch_train_bf16", ["torch"], check_train),
    Case("dataloader_pinned", ["torch"], check_dataloader),
    Case("torch_compile", ["torch", "triton"], check_compile),
    Case("jax_jit", ["jax"], check_jax),
    Case("jax_train", ["jax"], check_jax_train),
    Case("cupy_rawkernel", ["cupy"], check_cupy),
    Case("triton_add", ["torch", "triton"], check_triton),
    Case("mp_pool_cuda", ["torch"], check_pool, main_uses_cuda=False, workers_terminated=True),
    Case("subprocess_cuda", ["torch"], check_subprocess),
    Case("sigint_checkpoint", ["torch"], check_sigint),
    Case("ipc_pair", ["torch"], check_ipc),
    Case("timm_vit_train", ["torch", "timm"], check_training(40, pytorch=True)),
    Case("gcn_train", ["torch", "torch_geometric"], check_training(40, pytorch=True)),
    Case("lightning_fit", ["torch", "pytorch_lightning"], check_training(40, pytorch=True)),
    Case("pipeline_microbatch", ["torch"], check_training(40, pytorch=True)),
    Case("flax_cnn_train", ["jax", "flax", "optax"], check_training(40)),
]


def run(command, timeout, cwd):
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd)


def run_case(case, apptracer, keep):
    failures = []

    def expect(ok, what):
        print(("  ok   " if ok else "  FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)

    program = os.path.join(PROGRAMS, case.name + ".py")
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "traces")
        os.mkdir(out)
        plain = run([sys.executable, program], case.timeout, scratch)
        traced = run([apptracer, "record", "-o", os.path.join(out, case.name + ".db"), "--",
                      sys.executable, program], case.timeout, scratch)
        expect(plain.returncode == 0, f"runs untraced (rc {plain.returncode}: {plain.stderr.strip()[-300:]})")
        expect(traced.returncode == plain.returncode,
               f"same exit code traced ({traced.returncode}: {traced.stderr.strip()[-300:]})")
        expect(traced.stdout == plain.stdout, f"same stdout ({plain.stdout.strip()!r} vs {traced.stdout.strip()!r})")
        paths = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".db"))
        traces = []
        for path in paths:
            try:
                traces.append(Trace(path, apptracer))
            except sqlite3.Error as error:
                expect(False, f"{os.path.basename(path)} opens ({error})")
        ended_as_expected = {"complete"} | ({"incomplete"} if case.workers_terminated else set())
        incomplete = [(os.path.basename(t.path), t.meta.get("status"), t.meta.get("end_reason"))
                      for t in traces if t.meta.get("status") not in ended_as_expected or
                      (t.meta.get("status") == "incomplete" and
                       t.meta.get("end_reason") != f"signal {int(signal.SIGTERM)}")]
        # The tracer's own lines on stderr say why an end was not written.
        said = [line for line in traced.stderr.splitlines() if line.startswith("apptracer: pid ")]
        expect(not incomplete, f"every trace complete ({len(traces)} traces; not: {incomplete}; {said[-3:]})")
        # A process forked from one that had started CUPTI records no GPU
        # activity (its meta says so): its kernels have no GPU times by design.
        untimed = sum(t.untimed_kernels() for t in traces
                      if not t.meta.get("gpu_activity", "").startswith("unavailable"))
        expect(untimed == 0, f"every kernel has GPU times where GPU activity is recorded ({untimed} without)")
        dropped = sum(int(t.meta.get("dropped_records", "0")) for t in traces)
        expect(dropped == 0, f"no record dropped ({dropped})")
        main = main_trace(traces) if case.main_uses_cuda else None
        expect(main is not None or not case.main_uses_cuda, "the program's own trace found")
        if main is not None or not case.main_uses_cuda:
            case.check(expect, traces, main)
        if keep:
            target = os.path.join(keep, case.name)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(out, target)
    return failures


def gpu_present():
    try:
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apptracer", required=True)
    parser.add_argument("--keep", help="copy each case's traces under this directory")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    unknown = set(args.cases) - {c.name for c in CASES}
    if unknown:
        print(f"framework_suite: unknown case(s) {sorted(unknown)}; known: {[c.name for c in CASES]}")
        return 2
    if not gpu_present():
        print("framework_suite: skipped (no GPU)")
        return 77
    passed, failed, skipped = [], [], []
    for case in CASES:
        if args.cases and case.name not in args.cases:
            continue
        missing = [m for m in case.modules if importlib.util.find_spec(m) is None]
        if missing:
            print(f"{case.name}: skipped ({', '.join(missing)} not installed)")
            skipped.append(case.name)
            continue
        print(f"{case.name}:", flush=True)
        try:
            failures = run_case(case, args.apptracer, args.keep)
        except subprocess.TimeoutExpired as error:
            print(f"  FAIL timed out after {error.timeout} s: {' '.join(error.cmd[:3])} ...")
            failures = ["timeout"]
        (failed if failures else passed).append(case.name)
    print(f"framework suite: {len(passed)} passed, {len(failed)} failed {failed}, {len(skipped)} skipped")
    if failed:
        return 1
    return 0 if passed else 77


if __name__ == "__main__":
    sys.exit(main())
