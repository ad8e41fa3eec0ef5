"""Turns a bench/run.sh log into the tables of bench/RESULTS.md.

The log's "result KEY VALUE" lines are the measurements and its
"note SECTION TEXT" lines say how they were taken. Each section of the
results file is replaced only when this run measured it, so GPU sections
(measured on the GPU machine) and CPU sections (measured anywhere) can come
from different runs; every section names its device, date and commit.
Targets are reported, never enforced: benchmarks do not assert timings.

    report.py --log LOG --results FILE --device TEXT --date TEXT --commit TEXT
"""
import argparse
import re
import statistics
import sys

# analyzer-real is written by hand from bench/analyzer_real.sh: kept as it is, as is
# every section not listed here.
ORDER = ["real", "um", "launch", "pytorch", "pytorch-hooks", "jax", "exact", "trace-size", "malloc",
         "malloc-gpu-host", "fork", "fork-gpu-host", "nvtx", "store", "store-gpu-host", "analyzer",
         "analyzer-real", "whatif"]
# The allocator's and the writer's costs depend on the host (with a GPU driver
# the default mode keeps a live map of host blocks; the GPU machine's CPU is
# not this one): their sections are kept per kind of host, side by side.
PER_HOST = ("malloc", "store", "fork")
GPU_HOST = "-gpu-host"
HEADER = """# apptracer benchmark results

Written by `bench/run.sh` (see docs/development.md, Benchmarks); each section
says where, when and at which commit it was measured. Benchmarks print and
assert nothing: targets are reported, met or not.
"""


def section_of(key):
    prefix = key.split(".")[0]
    if prefix in ("launch", "memcpy-async", "launch-after-work"):
        return "launch"
    if prefix.startswith("malloc-"):
        return "malloc"
    if prefix.startswith("exact-"):
        return "exact"
    if prefix.startswith("real-"):
        return "real"
    if prefix.startswith("um-"):
        return "um"
    if prefix.startswith("fork-"):
        return "fork"
    return prefix


def read_log(path):
    results, notes = {}, {}
    with open(path) as log:
        for line in log:
            words = line.split(maxsplit=2)
            if len(words) == 3 and words[0] == "result":
                results[words[1]] = float(words[2])
            elif len(words) == 3 and words[0] == "note":
                notes.setdefault(words[1], []).append(words[2].strip())
    return results, notes


def fmt(value, digits=0):
    return "—" if value is None else f"{value:,.{digits}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def verdict(ok):
    return "met" if ok else "**not met**"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def launch_section(r):
    rows, targets = [], []
    loops = (("launch", "empty kernel launch"), ("memcpy-async", "cudaMemcpyAsync, 64 B pinned → device"),
             ("launch-after-work", "the same launch after the host's own work"))
    for loop, label in loops:
        p, b, t = (r.get(f"{loop}.{v}.per_op") for v in ("untraced", "bare", "apptracer"))
        if p is None:
            continue
        bare_added = None if b is None else b - p
        tracer_added = None if t is None else t - p
        bare_wall, tracer_wall = r.get(f"{loop}.bare.wall_ms"), r.get(f"{loop}.apptracer.wall_ms")
        rows.append([label, fmt(p), fmt(b), fmt(t), fmt(bare_added), fmt(tracer_added),
                     fmt(ratio(t, b), 2), fmt(ratio(tracer_added, bare_added), 2), fmt(ratio(t, p), 2),
                     fmt(r.get(f"{loop}.untraced.wall_ms")), fmt(bare_wall), fmt(tracer_wall),
                     fmt(ratio(tracer_wall, bare_wall), 2)])
        if t is None or b is None:
            continue
        if loop == "launch":
            targets.append(f"per-launch cost ≤ 1.5× the bare CUPTI subscriber's: {ratio(t, b):.2f}× → {verdict(t / b <= 1.5)}")
            targets.append(f"≤ 1 µs added per launch: {tracer_added:,.0f} ns → {verdict(tracer_added <= 1000)}"
                           f" (the bare subscriber alone adds {bare_added:,.0f} ns)")
        if loop == "launch-after-work":
            # Not a target: what tracing adds to the host's work between calls.
            alone = r.get("launch.apptracer.per_op"), r.get("launch.untraced.per_op")
            if None not in alone:
                between = tracer_added - (alone[0] - alone[1])
                targets.append(f"what tracing adds to the host's own work between launches (its added cost after"
                               f" work, less a launch's alone): {between:,.0f} ns, {100 * between / p:.1f}% of the"
                               f" untraced loop")
            continue
        # Per call and, for launches, the whole process (its end included).
        targets.append(f"{label}: ≤ 1.1× the bare subscriber per call: {ratio(t, b):.2f}× → {verdict(t / b <= 1.1)}")
        if loop == "launch" and tracer_wall is not None and bare_wall is not None:
            targets.append(f"{label}: process wall ≤ 1.15× the bare subscriber's: {ratio(tracer_wall, bare_wall):.2f}×"
                           f" → {verdict(tracer_wall <= 1.15 * bare_wall)}")
    body = table(["loop (ns per call)", "untraced", "bare CUPTI", "apptracer", "added: bare", "added: apptracer",
                  "apptracer / bare", "added: apptracer / bare", "apptracer / untraced", "process wall (ms): untraced",
                  "bare", "apptracer", "apptracer / bare"], rows)
    return "Launch-bound (GPU)", body, targets


def pytorch_section(r):
    variants = (("untraced", "untraced"), ("bare", "bare CUPTI subscriber"), ("torch-profiler", "torch.profiler"),
                ("apptracer", "apptracer"))
    base = r.get("pytorch.untraced.per_op")
    rows = []
    for key, label in variants:
        step = r.get(f"pytorch.{key}.per_op")
        rows.append([label, fmt(step), fmt(ratio(step, base), 2), fmt(r.get(f"pytorch.{key}.wall_ms"))])
    body = table(["run", "median step (µs)", "step / untraced", "process wall (ms)"], rows)
    targets = []
    t, prof = r.get("pytorch.apptracer.per_op"), r.get("pytorch.torch-profiler.per_op")
    if t is not None and prof is not None:
        targets.append(f"step time under apptracer ≤ under torch.profiler: {t:,.0f} vs {prof:,.0f} µs"
                       f" ({ratio(t, prof):.2f}×) → {verdict(t <= prof)}")
    return "A real program: PyTorch MLP training steps (GPU)", body, targets


def pytorch_hooks_section(r):
    off, t = r.get("pytorch-hooks.apptracer-no-hooks.per_op"), r.get("pytorch-hooks.apptracer.per_op")
    rows = [["apptracer, tensors not recorded (--framework-allocators=off)", fmt(off),
             fmt(r.get("pytorch-hooks.apptracer-no-hooks.wall_ms"))],
            ["apptracer (tensors recorded: the caching allocator's blocks)", fmt(t),
             fmt(r.get("pytorch-hooks.apptracer.wall_ms"))]]
    body = table(["run", "median step (µs)", "process wall (ms)"], rows)
    targets = [] if t is None or off is None else [
        f"recording the caching allocator's blocks adds ≤ 5% to the step: {t:,.0f} vs {off:,.0f} µs"
        f" ({(ratio(t, off) - 1) * 100:+.1f}%) → {verdict(t <= off * 1.05)}"]
    return "Recording tensors: the caching allocator's blocks (GPU)", body, targets


REAL_WORKLOADS = (("resnet", "ResNet-18 training step (channels_last, bf16, SGD momentum, batch 64 at 96×96)"),
                  ("vit", "ViT-tiny training step (112×112, batch 32, bf16, fused AdamW)"),
                  ("transformer", "GPT-2-style training step"), ("generate", "GPT-2-style generate (32 tokens)"),
                  ("dataloader", "MLP step fed by a pinned DataLoader"))
REAL_VARIANTS = (("untraced", "untraced"), ("bare", "bare CUPTI subscriber"),
                 ("apptracer-core", "apptracer: callbacks and writer only"),
                 ("apptracer-no-hooks", "apptracer, framework allocators off"),
                 ("apptracer-no-host", "apptracer, host allocations off"),
                 ("apptracer", "apptracer"), ("torch-profiler", "torch.profiler"))


def real_section(r):
    parts = []
    targets = []
    for workload, label in REAL_WORKLOADS:
        get = lambda v: r.get(f"real-{workload}.{v}.per_op")  # noqa: E731
        base, bare, full = get("untraced"), get("bare"), get("apptracer")
        if base is None:
            continue
        rows = [[name, fmt(get(v)), fmt(ratio(get(v), base), 2), fmt(ratio(get(v), bare), 2)]
                for v, name in REAL_VARIANTS if get(v) is not None]
        parts.append(f"**{label}**\n\n" + table(["run", "median step (µs)", "/ untraced", "/ bare"], rows))
        core, no_hooks, no_host = get("apptracer-core"), get("apptracer-no-hooks"), get("apptracer-no-host")
        if None not in (bare, core, no_hooks, no_host, full):
            where = [("CUPTI (bare − untraced)", bare - base), ("our callbacks and writer (core − bare)", core - bare),
                     ("framework-allocator hooks (no-host − core)", no_host - core),
                     ("malloc hooks (no-hooks − core)", no_hooks - core),
                     ("both together beyond their sum", full - no_hooks - no_host + core)]
            parts.append("Where a step's extra time goes (µs): " +
                         "; ".join(f"{what} {value:+,.0f}" for what, value in where))
        elif None not in (base, bare, no_hooks, full):
            parts.append(f"Where a step's extra time goes (µs): CUPTI (bare − untraced) {bare - base:+,.0f}; "
                         f"the rest of the tracer without the framework hook (no-hooks − bare) {no_hooks - bare:+,.0f}; "
                         f"the framework-allocator hook (apptracer − no-hooks) {full - no_hooks:+,.0f}")
        inside = self_cost_line(r, workload)
        if inside:
            parts.append(inside)
        if full is not None:
            targets.append(f"{label}: ≤ 1.10× untraced and ≤ 1.05× bare: {ratio(full, base):.2f}× and "
                           f"{fmt(ratio(full, bare), 2)}× → {verdict(full <= base * 1.10 and bare is not None and full <= bare * 1.05)}")
    return "Real programs: step time, and where the tracer's cost goes (GPU)", "\n\n".join(parts), targets


SELF_COST_SITES = [("api_callback", "CUDA callbacks"), ("kernel_arguments", "of which kernel arguments"),
                   ("record_append", "records queued (in the sites above)"),
                   ("host_allocate", "malloc hooks"), ("host_free", "free hooks"),
                   ("framework_allocator", "framework-allocator events"),
                   ("activity_buffer", "activity buffers (CUPTI's thread)")]
# Parts of the writer thread's time, by what it was writing.
WRITER_SITES = [("writer_drain", "draining"), ("writer_api_calls", "API calls"),
                ("writer_allocations", "allocations"), ("writer_launches", "launches"),
                ("writer_arguments", "launch arguments"), ("writer_argument_sets", "of which their sets"),
                ("writer_kernel_activity", "kernel activity"),
                ("writer_copies", "copies and memsets"), ("writer_tensor_blocks", "tensor blocks"),
                ("writer_other", "other records"), ("writer_pass_end", "ends of passes"),
                ("writer_commit", "commits")]


def self_cost_line(r, workload):
    """The tracer's own time per step, by site (bench/self_cost.py)."""
    get = lambda site, what: r.get(f"real-{workload}.self.{site}.{what}")  # noqa: E731
    if get("api_callback", "us_per_step") is None:
        return None
    sites = [f"{label} {get(site, 'us_per_step'):,.0f} ({get(site, 'calls_per_step'):,.0f} calls)"
             for site, label in SELF_COST_SITES if get(site, "us_per_step") is not None]
    writer = get("writer_cpu", "us_per_step")
    writer_parts = [f"{label} {get(site, 'us_per_step'):,.0f} ({get(site, 'calls_per_step'):,.0f})"
                    for site, label in WRITER_SITES if get(site, "us_per_step") is not None]
    timer = r.get(f"real-{workload}.self.timer_ns")
    again = r.get(f"real-{workload}.self.rows_stored_again_per_step")
    return ("Inside the tracer, per step (µs, `apptracer record --self-cost`, N and 3N steps differenced): " +
            "; ".join(sites) + (f"; the writer thread's CPU {writer:,.0f}" if writer is not None else "") +
            (f" (its wall time by what it wrote, µs (records or calls): {', '.join(writer_parts)})"
             if writer_parts else "") +
            (f"; rows stored again because their GPU activity came after them: {again:,.0f}"
             if again is not None else "") +
            (f". Each timed call includes about {timer:.0f} ns of timing itself." if timer else ""))


def um_section(r):
    base = r.get("um-on-demand.untraced.per_op")
    variants = sorted({k.split(".")[1] for k in r if k.startswith("um-on-demand.")},
                      key=lambda v: (v != "untraced", not v.startswith("bare"), v))
    rows = [[v, fmt(r.get(f"um-on-demand.{v}.per_op"), 2),
             fmt(None if base is None or r.get(f"um-on-demand.{v}.per_op") is None
                 else 100 * r[f"um-on-demand.{v}.per_op"] / base, 0)] for v in variants]
    body = table(["run", "on-demand migration (GiB/s)", "% of untraced"], rows)
    t = r.get("um-on-demand.apptracer.per_op")
    targets = [] if t is None or base is None else [
        f"on-demand migration traced (default counters) ≥ 90% of untraced: {100 * t / base:.0f}% → {verdict(t >= 0.9 * base)}"]
    return "Unified memory: what each counter costs on-demand migration (GPU)", body, targets


def fork_section(r):
    base = r.get("fork-t2.untraced.per_op")
    rows = [[v, fmt(r.get(f"fork-t2.{v}.per_op")), fmt(ratio(r.get(f"fork-t2.{v}.per_op"), base), 1),
             fmt(r.get(f"fork-t2.{v}.wall_ms"))] for v in ("untraced", "apptracer", "apptracer-all")]
    body = table(["run", "median fork() (µs)", "/ untraced", "process wall (ms)"], rows)
    return "fork() while threads allocate", body, []


EXACT_APPS = (("vector_add", "vector_add"), ("kernel_args", "kernel_args"),
              ("exact_patterns", "exact_patterns"), ("pytorch", "PyTorch MLP steps"))


def exact_section(r):
    rows, targets = [], []
    for key, label in EXACT_APPS:
        walls = [r.get(f"exact-{key}.{v}.wall_ms") for v in ("untraced", "record", "record-exact")]
        if all(w is None for w in walls):
            continue
        rows.append([label] + [fmt(w) for w in walls] +
                    [fmt(ratio(walls[2], walls[0]), 1), fmt(ratio(walls[2], walls[1]), 1)])
    body = table(["program", "untraced (ms)", "apptracer (ms)", "--exact (ms)", "--exact / untraced",
                  "--exact / apptracer"], rows)
    base, exact = r.get("exact-pytorch.untraced.wall_ms"), r.get("exact-pytorch.record-exact.wall_ms")
    body += ("\n\nWall time of the whole process: `record --exact` runs the program twice where the sanitizer"
             " and CUPTI cannot share a process (the H100), then joins the runs; the sanitizer run's own step"
             " times are in record's log, not on the program's stdout.")
    if base is not None and exact is not None:
        targets.append(f"--exact on the MLP training program ≤ 20× untraced: {ratio(exact, base):.1f}× →"
                       f" {verdict(exact <= 20 * base)}")
    return "Exact mode: what --exact costs (GPU)", body, targets


def trace_size_section(r):
    per_table = sorted(((key.split(".", 2)[2], value) for key, value in r.items()
                        if key.startswith("trace-size.table.")), key=lambda item: -item[1])
    marginal = r.get("trace-size.marginal_bytes_per_launch")
    body = table(["kernel launches (longer run)", "bytes per launch (whole file)", "bytes per added launch"],
                 [[fmt(r.get("trace-size.launches")), fmt(r.get("trace-size.bytes_per_launch")), fmt(marginal)]])
    if per_table:
        body += "\n\nWhat each added launch costs, by table (SQLite's dbstat, pages):\n\n" + table(
            ["table or index", "bytes per added launch"], [[name, fmt(value)] for name, value in per_table])
    targets = []
    if marginal is not None:
        targets.append(f"≤ 250 bytes per kernel launch, all tables included: {marginal:,.0f} → "
                       f"{verdict(marginal <= 250)}")
    return "Trace size: the PyTorch MLP training steps (GPU)", body, targets


def jax_section(r):
    variants = (("untraced", "untraced (XLA's BFC pool)"), ("xla-platform", "untraced, XLA's platform allocator"),
                ("bare", "bare CUPTI subscriber (BFC pool)"), ("apptracer", "apptracer (BFC pool: arrays seen as its segments)"),
                ("apptracer-per-buffer", "apptracer --framework-allocators=per-buffer (each array a value)"))
    base = r.get("jax.untraced.per_op")
    rows = []
    for key, label in variants:
        step = r.get(f"jax.{key}.per_op")
        if step is None:
            continue
        rows.append([label, fmt(step), fmt(ratio(step, base), 2), fmt(r.get(f"jax.{key}.wall_ms"))])
    body = table(["variant", "µs per step (median)", "× untraced", "process wall (ms)"], rows)
    per_buffer, traced = r.get("jax.apptracer-per-buffer.per_op"), r.get("jax.apptracer.per_op")
    if per_buffer is not None and traced is not None:
        body += (f"\n\nThe per-buffer mode (no target: it is opt-in) adds to a traced step: {per_buffer:,.0f} vs"
                 f" {traced:,.0f} µs ({(ratio(per_buffer, traced) - 1) * 100:+.1f}%).")
    return "JAX jitted training steps, per-buffer mode (GPU)", body, []


def malloc_section(r):
    rows, targets = [], []
    for threads in (1, 2):
        key = f"malloc-t{threads}"
        p = r.get(f"{key}.untraced.per_op")
        if p is None:
            continue
        t, a = r.get(f"{key}.apptracer.per_op"), r.get(f"{key}.apptracer-all.per_op")
        pw, tw = r.get(f"{key}.untraced.wall_ms"), r.get(f"{key}.apptracer.wall_ms")
        rows.append([str(threads), fmt(p, 1), fmt(t, 1), fmt(ratio(t, p), 2), fmt(a, 1),
                     fmt(ratio(a, p), 2), fmt(pw), fmt(tw), fmt(ratio(tw, pw), 2)])
        if t is not None:
            noise = " (below 1: the difference is run-to-run noise)" if t < p else ""
            targets.append(f"traced/untraced ≤ 1.3× ({threads} thread(s)): {t / p:.2f}×{noise} → {verdict(t / p <= 1.3)}")
    body = table(["threads", "untraced (ns per call)", "apptracer", "ratio", "apptracer --host-allocations=all",
                  "ratio", "untraced process (ms)", "apptracer process (ms)", "ratio"], rows)
    body += ("\n\nThe allocator is interposed (tracer/host/host_allocator.cpp): every call forwards to"
             " the real allocator and is counted in a per-thread size histogram; blocks of 4 KiB or"
             " more enter a sharded live map (apptracer, default), or with `--host-allocations=all`"
             " become `allocations` rows from their allocation (kept by the address registry alone)."
             " Where no GPU driver exists the default mode has nothing to watch for, so only the"
             " `all` column measures recording there.")
    return "Malloc-bound (CPU)", body, targets


def nvtx_section(r):
    rows, target = [], None
    for key, what in (("nvtx", "within the record buffers (the program's cost)"),
                      ("nvtx-sustained", "more than the buffers hold (the writer's pace)")):
        p = r.get(f"{key}.untraced.per_op")
        t = r.get(f"{key}.apptracer.per_op", r.get(f"{key}.apptracer-all.per_op"))
        if p is None and t is None:
            continue
        rows.append([what, fmt(p, 1), fmt(t, 1), fmt(None if p is None or t is None else t - p, 1)])
        if key == "nvtx":
            target = t
    body = table(["pairs", "untraced (ns per push+pop)", "apptracer", "added"], rows)
    body += ("\n\nThe tracer is the process's NVTX tool (tracer/translate/nvtx_injection.cpp): a push"
             " and a pop each fill a 128-byte record in the thread's buffer; the writer stores the range."
             " A program that opens ranges faster than the writer stores them waits for it once the"
             " buffers (`APPTRACER_BUFFER_MB`, 64 MiB) are full: the sustained row.")
    targets = [] if target is None else [f"push+pop ≤ 500 ns: {target:,.0f} ns → {verdict(target <= 500)}"]
    return "NVTX ranges", body, targets


def store_section(r):
    runs = (("mixed", 1, "mixed (8 launches : 1 copy : 1 host alloc), 1 thread"),
            ("mixed", 2, "mixed, 2 threads"),
            ("launch", 1, "kernel launches only"),
            ("launch", 2, "kernel launches only, 2 threads"),
            ("copy", 1, "copies only"),
            ("host-alloc", 1, "host allocations only"),
            ("tensor", 1, "framework allocators' tensor blocks only"))
    rows = []
    for mix, threads, label in runs:
        key = f"store.{mix}.t{threads}"
        if f"{key}.records_per_s" not in r:
            continue
        rows.append([label, fmt(r[f"{key}.records_per_s"]), fmt(r.get(f"{key}.producer_ns_per_record")),
                     fmt(r.get(f"{key}.producer_wait_s"), 2), fmt(r.get(f"{key}.bytes_per_op"), 1)])
    body = table(["records from", "records/s (end to end)", "producer ns per record", "producers waited (s)",
                  "database bytes per op"], rows)
    body += ("\n\nA launch is 4 records (kernel, its 3 pointer arguments, runtime call with its"
             " driver call folded in, GPU activity), a copy 3 (copy, runtime call, GPU activity), a host"
             " allocation 2 (allocation and free, as `--host-allocations=all` stores them), a tensor block 3"
             " (allocated, free requested, freed, through the framework-allocator hook). Records/s is"
             " end to end: from the first record to the finished, checkpointed file. Producer ns per record is"
             " the producing thread's time per record, waits for the writer included: for tensor blocks,"
             " what the framework-allocator hook costs the allocating thread per event.")
    targets = []
    for threads in (1, 2):
        rate = r.get(f"store.mixed.t{threads}.records_per_s")
        if rate is not None:
            targets.append(f"writer ≥ 1M records/s (mixed, {threads} thread(s)): {rate / 1e6:.2f}M → {verdict(rate >= 1e6)}")
    return "Store throughput (CPU, synthetic records)", body, targets


def analyzer_section(r):
    sizes = sorted({int(k.split(".")[2]) for k in r if k.startswith("analyzer.trace.")})
    rows, previous = [], None
    for n in sizes:
        stats_s, dvdg_s = r.get(f"analyzer.stats.{n}.s"), r.get(f"analyzer.dvdg.{n}.s")
        growth = "—"
        if previous is not None:
            p, ps, pd = previous
            growth = f"×{n / p:g} ops: stats ×{fmt(ratio(stats_s, ps), 1)}, dvdg ×{fmt(ratio(dvdg_s, pd), 1)}"
        rows.append([f"{n:,}", fmt(r.get(f"analyzer.trace.{n}.mib")),
                     fmt(stats_s, 2), fmt(r.get(f"analyzer.stats.{n}.cpu_s"), 2),
                     fmt(r.get(f"analyzer.stats.{n}.peak_mib")),
                     fmt(dvdg_s, 2), fmt(r.get(f"analyzer.dvdg.{n}.cpu_s"), 2),
                     fmt(r.get(f"analyzer.dvdg.{n}.peak_mib")),
                     fmt(r.get(f"analyzer.timeline.{n}.s"), 2),
                     fmt(r.get(f"analyzer.timeline.{n}.peak_mib")),
                     fmt(r.get(f"analyzer.query.{n}.s"), 2),
                     fmt(r.get(f"analyzer.query.{n}.peak_mib")), growth])
        previous = (n, stats_s, dvdg_s)
    body = table(["operations", "trace (MiB)", "stats wall (s)", "stats CPU (s)", "stats peak RSS (MiB)",
                  "dvdg wall (s)", "dvdg CPU (s)", "dvdg peak RSS (MiB)", "timeline wall (s)",
                  "timeline peak RSS (MiB)", "query wall (s)", "query peak RSS (MiB)",
                  "wall time growth"], rows)
    body += ("\n\nSynthetic traces (bench/synthetic_trace.h): 10 kernel launches with 3 pointer"
             " arguments each per host↔device copy, each with its runtime and driver API call, on"
             " two streams ordered by events. CPU is user + system time: on a busy machine it is"
             " the steadier number. timeline writes a Perfetto file to /dev/null; query is"
             " `SELECT * FROM kernel_args` as CSV.")
    layouts = []
    for key, label in (("dvdg_plain", "2000 buffers of their own"),
                       ("dvdg_sub", "tensors in 20 segments, every kernel output a new one")):
        for n in sorted({int(k.split(".")[2]) for k in r if k.startswith(f"analyzer.{key}.")}):
            layouts.append([f"{n:,} kernels + {n // 10:,} copies", label,
                            fmt(r.get(f"analyzer.{key}.{n}.s"), 2), fmt(r.get(f"analyzer.{key}.{n}.cpu_s"), 2),
                            fmt(r.get(f"analyzer.{key}.{n}.peak_mib"))])
    if layouts:
        body += ("\n\nThe DVDG with sub-allocations (bench/dvdg_bench.cpp): the same kernels and copies,"
                 " with device memory as separate allocations or as a framework allocator's tensors"
                 " (sub_allocations rows: each is a region of its own).\n\n")
        body += table(["operations", "device memory", "dvdg wall (s)", "dvdg CPU (s)", "dvdg peak RSS (MiB)"],
                      layouts)
    targets = []
    sub_1m = r.get("analyzer.dvdg_sub.1000000.s")
    if sub_1m is not None:
        peak = r.get("analyzer.dvdg_sub.1000000.peak_mib")
        targets.append(f"DVDG of 1M operations with sub-allocations < 5 s and < 1 GB: {sub_1m:.2f} s wall,"
                       f" {fmt(peak)} MiB → {verdict(sub_1m < 5 and peak is not None and peak < 1024)}")
    dvdg_1m = r.get("analyzer.dvdg.1000000.s")
    if dvdg_1m is not None:
        cpu = r.get("analyzer.dvdg.1000000.cpu_s")
        targets.append(f"DVDG of 1M operations < 5 s: {dvdg_1m:.2f} s wall ({fmt(cpu, 2)} s CPU) → {verdict(dvdg_1m < 5)}")
    if sizes:
        for command in ("timeline", "query"):
            peak = r.get(f"analyzer.{command}.{sizes[-1]}.peak_mib")
            if peak is not None:
                targets.append(f"{command} in bounded memory (< 100 MiB peak at {sizes[-1]:,} operations): "
                               f"{peak:.0f} MiB → {verdict(peak < 100)}")
    return "Analyzer scaling (CPU)", body, targets


WHATIF_CHECKS = {
    "a": ("own run time predicted from its own trace", 5),
    "b": ("pageable run with --pin vs its pinned twin", 10),
    "c": ("one-stream run with --overlap vs its 3-stream twin", 15),
    "d": ("trace of one machine with --system2 of another vs the other's run", 10),
    "e": ("independent one-buffer chunked pipeline: --overlap / --pin vs its untraced twins", 10),
    "f": ("independent pairs (chunk counts and sizes, untouched pageable memory, PyTorch DataLoader, "
          "2-GPU halo exchange staged through the host -> peer to peer): "
          "A traced, B predicted, B measured untraced", 10),
}
# The independent pairs' median error, over checks e and f.
WHATIF_INDEPENDENT_MEDIAN = 5


def whatif_section(r):
    rows, targets = [], []
    cases = sorted({k.rsplit(".", 1)[0] for k in r if k.startswith("whatif.")})
    worst = {}
    for case in cases:
        _, check, machine, name = case.split(".", 3)
        predicted, actual, error = (r.get(f"{case}.{m}") for m in ("predicted_ms", "actual_ms", "error_pct"))
        what, target = WHATIF_CHECKS[check]
        rows.append([f"({check}) {what}", machine, name, fmt(predicted, 2), fmt(actual, 2),
                     "—" if error is None else f"{error:+.1f}%", f"{target}%"])
        if error is not None and not name.endswith("whole-run"):
            worst[check] = max(worst.get(check, 0), abs(error))
    body = table(["check", "machine", "case", "predicted (ms)", "actual (ms)", "error", "target"], rows)
    body += ("\n\nbench/whatif_validation.sh: `apptracer links --quick` measures each machine, the test programs"
             " (test_apps/whatif_*.cu) run under `apptracer record`, and `apptracer whatif` predicts from their"
             " traces. Times are the programs' work phase (whatif's period 2); the whole run (set-up and"
             " clean-up included, kept as recorded) is shown beside the own predictions.")
    for check, error in sorted(worst.items()):
        what, target = WHATIF_CHECKS[check]
        targets.append(f"({check}) {what} within {target}%: worst {error:.1f}% → {verdict(error <= target)}")
    independent = sorted(abs(r[f"{case}.error_pct"]) for case in cases
                         if case.split(".")[1] in ("e", "f") and f"{case}.error_pct" in r)
    if independent:
        middle = statistics.median(independent)
        targets.append(f"median error of the independent pairs (e, f) within {WHATIF_INDEPENDENT_MEDIAN}%: "
                       f"{middle:.1f}% of {len(independent)} → {verdict(middle <= WHATIF_INDEPENDENT_MEDIAN)}")
    return "What-if predictions against real runs (GPU)", body, targets


RENDER = {"launch": launch_section, "pytorch": pytorch_section, "pytorch-hooks": pytorch_hooks_section,
          "exact": exact_section, "jax": jax_section, "trace-size": trace_size_section,
          "malloc": malloc_section, "nvtx": nvtx_section, "store": store_section, "analyzer": analyzer_section,
          "whatif": whatif_section, "real": real_section, "um": um_section, "fork": fork_section}


def section_name(name, gpu_host):
    return name + GPU_HOST if gpu_host and name in PER_HOST else name


def render(name, results, notes, args):
    base = name.removesuffix(GPU_HOST)
    title, body, targets = RENDER[base](results)
    if base != name:
        title += ", on the GPU machine's host"
    how = "; ".join(notes.get(base, []))
    lines = [f"## {title}", "",
             f"Measured on {args.device}, {args.date}, commit `{args.commit}`." + (f" {how}." if how else ""),
             "", body]
    if targets:
        lines += ["", "Targets:", ""] + [f"- {t}" for t in targets]
    return "\n".join(lines) + "\n"


def existing_sections(path):
    """The file's sections by name. The file is written again from them, so
    text outside every section would be lost: refused, naming its line."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    pattern = re.compile(r"<!-- section ([\w-]+) -->\n(.*?)<!-- end \1 -->\n", re.S)
    sections, outside, last = {}, [], 0
    for m in pattern.finditer(text):
        outside.append((last, text[last:m.start()]))
        sections[m.group(1)] = m.group(2)
        last = m.end()
    outside.append((last, text[last:]))
    header = outside[0][1].replace(HEADER, "", 1) if outside[0][1].startswith("# ") else outside[0][1]
    for start, loose in [(0, header)] + outside[1:]:
        if loose.strip():
            offset = text.index(loose.strip(), start)
            line = text.count("\n", 0, offset) + 1
            sys.exit(f"report.py: {path} line {line} is outside every <!-- section NAME --> ... "
                     f"<!-- end NAME --> pair and would be lost; put it inside one")
    return sections


def placed(names, sections):
    """`names` (the file's order) with the sections it lacks put in."""
    for name in ORDER:
        if name in sections and name not in names:
            before = [n for n in ORDER[:ORDER.index(name)] if n in names]
            names.insert(names.index(before[-1]) + 1 if before else 0, name)
    return names


def main():
    parser = argparse.ArgumentParser()
    for option in ("--log", "--results", "--device", "--date", "--commit"):
        parser.add_argument(option, required=True)
    parser.add_argument("--gpu-host", action="store_true", help="measured on a machine with a GPU driver")
    args = parser.parse_args()
    results, notes = read_log(args.log)
    measured = {section_name(section_of(key), args.gpu_host) for key in results}
    sections = existing_sections(args.results)
    existing = list(sections)
    for name in ORDER:
        if name in measured:
            sections[name] = render(name, results, notes, args)
            print(sections[name])
    with open(args.results, "w") as out:
        out.write(HEADER)
        # The file's order, hand-written sections (soak runs, hand-made
        # tables) where they were; a section new to the file after the one
        # ORDER puts before it.
        for name in placed(list(existing), sections):
            out.write(f"\n<!-- section {name} -->\n{sections[name]}<!-- end {name} -->\n")
    print(f"results written to {args.results}")


if __name__ == "__main__":
    main()
