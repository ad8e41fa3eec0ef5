#!/usr/bin/env python3
"""Runs one test case (an app, its arguments, an injection route) with and
without the tracer, and asserts on the trace.

    check_trace.py CASE --apps DIR --apptracer PATH --library PATH --other-subscriber PATH [--keep DIR]

The assertions here are the specification of what capture must record for
each app: exact counts, bytes, kinds and resolved allocations. The app's
output and exit code must be the same traced and untraced. Exits 77 (skipped)
where there is no CUDA GPU, 0 when every assertion holds, 1 otherwise.
"""
import argparse
import ctypes
import glob
import os
import sqlite3
import subprocess
import sys
import tempfile

SKIPPED = 77
MiB = 1 << 20

# enum values (common/include/apptracer/enums.h)
DEVICE, PINNED_HOST, WRITE_COMBINED, MAPPED, REGISTERED, MANAGED, POOL = 1, 2, 3, 4, 5, 6, 8
HTOD, DTOH, DTOD = 1, 2, 3
MEM_PAGEABLE, MEM_PINNED, MEM_DEVICE, MEM_MANAGED = 1, 2, 3, 5
SYNC_STREAM = 2
ACCESS_UNKNOWN, ACCESS_R, ACCESS_RW = 0, 1, 3
SOURCE_NONE, SOURCE_ASSUMED, SOURCE_CONST = 0, 1, 2
EVENT_RECORD, EVENT_WAIT = 1, 2
DOMAIN_RUNTIME, DOMAIN_DRIVER = 1, 2


def gpu_count():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    except OSError:
        return 0


class Trace:
    def __init__(self, path):
        self.path = path
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def rows(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def one(self, sql, *args):
        rows = self.rows(sql, *args)
        return rows[0][0] if rows else None

    def meta(self, key):
        return self.one("SELECT value FROM meta WHERE key = ?", key)

    def api_count(self, name):
        return self.one("SELECT count(*) FROM api_calls a JOIN strings s ON s.id = a.name_id "
                        "WHERE s.text = ?", name)


class Checker:
    def __init__(self, app):
        self.app = app
        self.failures = []

    def expect(self, condition, what):
        if not condition:
            self.failures.append(what)

    def equal(self, actual, expected, what):
        self.expect(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=240)
    return result.returncode, result.stdout, result.stderr


# --- per-app assertions -------------------------------------------------------

def common_checks(c, t):
    c.equal(t.meta("status"), "complete", "meta.status")
    c.expect(int(t.meta("schema_version")) >= 1, "schema_version present")
    c.expect(t.one("SELECT count(*) FROM devices") >= 1, "devices recorded")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE gpu_start_ns IS NULL"), 0,
            "every copy has GPU times")
    c.equal(t.one("SELECT count(*) FROM kernels WHERE gpu_start_ns IS NULL"), 0,
            "every kernel has GPU times")
    c.equal(t.one("SELECT count(*) FROM memsets WHERE gpu_start_ns IS NULL"), 0,
            "every memset has GPU times")
    c.equal(t.meta("dropped_records"), "0", "no records dropped")


def dvdg_edges(trace):
    """Builds the trace's DVDG with `apptracer dvdg` and returns its edges as
    (source allocation, version, destination allocation, version, operation
    kind), allocation None for a host region no allocation covers."""
    result = subprocess.run([APPTRACER, "dvdg", trace.path], capture_output=True, text=True)
    if result.returncode != 0:
        return [("apptracer dvdg failed", result.stderr.strip())]
    db = sqlite3.connect(trace.path)
    try:
        return db.execute(
            "SELECT s.alloc_id, s.version, d.alloc_id, d.version, o.kind FROM dvdg_edges e "
            "JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_values d ON d.id = e.dst_value_id "
            "JOIN dvdg_ops o ON o.id = e.op_id WHERE e.kind = 'data' "
            "ORDER BY e.op_id, s.alloc_id, d.alloc_id").fetchall()
    finally:
        db.close()


def check_vector_add(c, t):
    device = t.rows("SELECT id, bytes FROM allocations WHERE kind = ? ORDER BY id", DEVICE)
    c.equal([b for _, b in device], [4 * MiB] * 3, "three 4 MiB device allocations")
    c.equal(t.one("SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0, "all freed")
    ids = [i for i, _ in device]
    copies = t.rows("SELECT kind, bytes, src_alloc_id, dst_alloc_id, src_memory, dst_memory "
                    "FROM memcpys ORDER BY api_start_ns")
    c.equal(copies, [(HTOD, 4 * MiB, None, ids[0], MEM_PAGEABLE, MEM_DEVICE),
                     (HTOD, 4 * MiB, None, ids[1], MEM_PAGEABLE, MEM_DEVICE),
                     (DTOH, 4 * MiB, ids[2], None, MEM_DEVICE, MEM_PAGEABLE)], "copies")
    kernels = t.rows("SELECT m.text, d.text, grid_x, block_x FROM kernels k "
                     "JOIN strings m ON m.id = k.name_id JOIN strings d ON d.id = k.demangled_id")
    c.equal(kernels, [("_Z10vector_addPfPKfS1_i",
                       "vector_add(float*, float const*, float const*, int)", 4096, 256)], "kernel")
    c.equal(t.api_count("cudaMalloc"), 3, "cudaMalloc calls")
    c.equal(t.api_count("cudaMemcpy"), 3, "cudaMemcpy calls")
    c.equal(t.api_count("cudaLaunchKernel"), 1, "cudaLaunchKernel calls")
    # The driver launch inside the runtime launch names the call it served.
    served = t.one("SELECT count(*) FROM api_calls d JOIN api_calls r "
                   "ON d.parent_correlation_id = r.correlation_id "
                   "JOIN strings s ON s.id = d.name_id WHERE s.text = 'cuLaunchKernel' "
                   "AND r.domain = ?", DOMAIN_RUNTIME)
    c.equal(served, 1, "cuLaunchKernel row names its cudaLaunchKernel")
    joined = t.one("SELECT count(*) FROM kernels k JOIN api_calls a "
                   "ON a.correlation_id = k.call_correlation_id AND a.domain = ?", DOMAIN_RUNTIME)
    c.equal(joined, 1, "kernel joins its runtime call by correlation id")
    a_d, b_d, s_d = ids
    # Fig. 6.1: a_h -> a_d', b_h -> b_d', a_d' -> s_d', b_d' -> s_d', s_d' -> s_h'.
    c.equal(dvdg_edges(t), [(None, 0, a_d, 1, "copy"), (None, 0, b_d, 1, "copy"),
                            (a_d, 1, s_d, 1, "kernel"), (b_d, 1, s_d, 1, "kernel"),
                            (s_d, 1, None, 1, "copy")], "the DVDG of Fig. 6.1")


def check_driver_vector_add(c, t):
    c.equal(t.rows("SELECT bytes FROM allocations WHERE kind = ?", DEVICE), [(4 * MiB,)] * 3,
            "three cuMemAlloc allocations")
    ids = [r[0] for r in t.rows("SELECT id FROM allocations ORDER BY id")]
    copies = t.rows("SELECT kind, bytes, src_alloc_id, dst_alloc_id FROM memcpys ORDER BY api_start_ns")
    c.equal(copies, [(HTOD, 4 * MiB, None, ids[0]), (HTOD, 4 * MiB, None, ids[1]),
                     (DTOH, 4 * MiB, ids[2], None)], "driver copies")
    c.equal(t.rows("SELECT s.text, launch_kind FROM kernels k JOIN strings s ON s.id = k.name_id"),
            [("vector_add", 1)], "extern C kernel via cuLaunchKernel")
    c.equal(t.one("SELECT count(*) FROM api_calls WHERE domain = ?", DOMAIN_RUNTIME), 0,
            "no runtime calls")
    # extern "C": no signature, so the kernel is assumed to read and write all three.
    a_d, b_d, s_d = ids
    kernel_edges = [e for e in dvdg_edges(t) if e[4] == "kernel"]
    c.equal(kernel_edges, [(a_d, 1, a_d, 2, "kernel"), (a_d, 1, b_d, 2, "kernel"),
                           (a_d, 1, s_d, 1, "kernel"), (b_d, 1, a_d, 2, "kernel"),
                           (b_d, 1, b_d, 2, "kernel"), (b_d, 1, s_d, 1, "kernel")],
            "DVDG kernel edges of an extern C kernel (every pointer read-write)")


def check_streams_events(c, t):
    pinned = t.one("SELECT id FROM allocations WHERE kind = ?", PINNED_HOST)
    device = t.one("SELECT id FROM allocations WHERE kind = ?", DEVICE)
    c.expect(pinned is not None and device is not None, "pinned and device allocations")
    kernel_stream = t.one("SELECT stream FROM kernels")
    copy = t.rows("SELECT kind, src_alloc_id, dst_alloc_id, dst_memory, is_async, stream FROM memcpys")
    c.equal(len(copy), 1, "one copy")
    if copy:
        kind, src, dst, dst_memory, is_async, copy_stream = copy[0]
        c.equal((kind, src, dst, dst_memory, is_async), (DTOH, device, pinned, MEM_PINNED, 1),
                "async DtoH into pinned memory")
        c.expect(copy_stream != kernel_stream, "kernel and copy on different streams")
        events = t.rows("SELECT kind, stream, event_handle FROM stream_events ORDER BY ns")
        c.equal([(k, s) for k, s, _ in events], [(EVENT_RECORD, kernel_stream), (EVENT_WAIT, copy_stream)],
                "event recorded on the producer, waited on by the consumer")
        c.expect(len({e for _, _, e in events}) == 1, "one event handle")
        c.equal(t.rows("SELECT kind, stream FROM syncs"), [(SYNC_STREAM, copy_stream)],
                "stream synchronize on the consumer")
        c.expect(t.one("SELECT end_ns - start_ns FROM syncs") >= 0, "sync has a duration")


def check_host_alloc_kinds(c, t):
    kinds = dict(t.rows("SELECT kind, count(*) FROM allocations GROUP BY kind"))
    c.equal(kinds, {DEVICE: 2, PINNED_HOST: 2, MAPPED: 1, WRITE_COMBINED: 1, REGISTERED: 1, MANAGED: 1},
            "allocation kinds")
    flags = dict(t.rows("SELECT kind, flags FROM allocations WHERE kind IN (?, ?)", MAPPED, WRITE_COMBINED))
    c.equal(flags, {MAPPED: 2, WRITE_COMBINED: 4}, "cudaHostAlloc flags kept")
    sources = t.rows("SELECT a.kind, m.src_memory FROM memcpys m LEFT JOIN allocations a "
                     "ON a.id = m.src_alloc_id WHERE m.kind = ? AND m.width IS NULL "
                     "ORDER BY m.api_start_ns", HTOD)
    c.equal(sources, [(PINNED_HOST, MEM_PINNED), (PINNED_HOST, MEM_PINNED), (MAPPED, MEM_PINNED),
                      (WRITE_COMBINED, MEM_PINNED), (REGISTERED, MEM_PINNED), (None, MEM_PAGEABLE)],
            "each host kind is the source of one copy")
    managed = t.one("SELECT id FROM allocations WHERE kind = ?", MANAGED)
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE dst_alloc_id = ?", managed), 1,
            "copy into managed memory resolved")
    pitched = t.rows("SELECT m.width, m.height, m.bytes, a.pitch IS NOT NULL FROM memcpys m "
                     "JOIN allocations a ON a.id = m.dst_alloc_id WHERE m.width IS NOT NULL")
    c.equal(pitched, [(1000, 64, 64000, 1)], "2D copy into a pitched allocation")


def check_memsets(c, t):
    device = t.one("SELECT id FROM allocations WHERE kind = ? AND bytes = ?", DEVICE, MiB)
    rows = t.rows("SELECT bytes, value, alloc_id = ?, alloc_offset, is_async FROM memsets "
                  "ORDER BY api_start_ns", device)
    c.equal(rows[:3], [(MiB, 0, 1, 0, 0), (8192, 0xab, 1, 4096, 0), (MiB // 2, 1, 1, 0, 1)],
            "linear memsets, interior pointer resolved")
    c.equal(len(rows), 4, "four memsets")
    if len(rows) == 4:
        c.equal(rows[3][0:2], (256 * 32, 3), "2D memset bytes and value")


def check_malloc_async(c, t):
    pools = t.rows("SELECT bytes, free_ns IS NOT NULL FROM allocations WHERE kind = ?", POOL)
    c.equal(pools, [(MiB, 1), (MiB, 1)], "two stream-ordered allocations, both freed")
    c.equal(t.one("SELECT count(*) FROM kernels"), 2, "two kernels")


def check_multithreaded(c, t):
    c.equal(t.one("SELECT count(*) FROM kernels"), 800, "8 x 100 launches")
    c.equal(t.one("SELECT count(DISTINCT stream) FROM kernels"), 8, "eight streams")
    c.equal(t.one("SELECT count(DISTINCT tid) FROM api_calls WHERE domain = ?", DOMAIN_RUNTIME), 8,
            "eight launching threads")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE kind = ?", DTOH), 8, "eight copies back")
    c.equal(t.one("SELECT count(*) FROM memsets"), 8, "eight memsets")
    c.equal(t.one("SELECT count(*) FROM allocations WHERE kind = ? AND free_ns IS NOT NULL", DEVICE), 8,
            "eight buffers freed")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE src_alloc_id IS NULL"), 0, "copies resolved")


def check_failing_call(c, t):
    failed = t.rows("SELECT return_code FROM api_calls a JOIN strings s ON s.id = a.name_id "
                    "WHERE s.text = 'cudaMalloc' ORDER BY start_ns")
    c.equal([r for (r,) in failed], [2, 0], "failed cudaMalloc recorded with its error")
    c.equal(t.rows("SELECT bytes FROM allocations"), [(1024,)], "only the real allocation")
    c.equal(t.one("SELECT count(*) FROM memsets"), 1, "work after the failure traced")


def check_peer_copy(c, t):
    rows = t.rows("SELECT bytes, src_device, dst_device, src_alloc_id IS NOT NULL, "
                  "dst_alloc_id IS NOT NULL FROM memcpys")
    c.equal(rows, [(8 * MiB, 0, 1, 1, 1)], "one peer copy between resolved allocations")


FORK_SIZES = {1 * MiB, 2 * MiB, 4 * MiB}


def check_forking(c, traces):
    c.equal(len(traces), 3, "one trace per process")
    sizes = set()
    for t in traces:
        c.equal(t.meta("status"), "complete", f"{t.path} status")
        sizes.update(b for (b,) in t.rows("SELECT bytes FROM allocations"))
        c.equal(t.one("SELECT count(*) FROM memcpys"), 2, f"{t.path} copies")
    c.equal(sizes, FORK_SIZES, "each process traced its own allocation")
    c.equal(len({t.meta("pid") for t in traces}), 3, "distinct pids")


def check_exit_status(status, reason=None):
    def check(c, t):
        c.equal(t.meta("status"), status, "meta.status")
        if reason:
            c.equal(t.meta("end_reason"), reason, "meta.end_reason")
        c.equal(t.rows("SELECT kind, bytes FROM allocations"), [(DEVICE, MiB)],
                "the allocation made before the end")
        c.equal(t.rows("SELECT kind, bytes FROM memcpys"), [(DTOH, MiB)], "the copy made before the end")
        c.equal(t.one("SELECT count(*) FROM memsets"), 1, "the memset made before the end")
    return check


def check_device_reset(c, t):
    common_checks(c, t)
    c.equal(t.rows("SELECT bytes FROM allocations"), [(MiB,), (MiB,)], "work before and after the reset")
    c.equal(t.one("SELECT count(*) FROM memcpys"), 2, "two copies")
    c.equal(t.api_count("cudaDeviceReset"), 1, "cudaDeviceReset recorded")


def check_kernel_args(c, t, stdout):
    device = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = ? "
                                   "ORDER BY id", DEVICE, 4 * MiB)]
    if len(device) != 3:
        c.expect(False, f"expected x, y and a freed buffer, got {device}")
        return
    x, y, gone = device
    managed = t.one("SELECT id FROM allocations WHERE kind = ?", MANAGED)
    mapped = t.one("SELECT id FROM allocations WHERE kind = ?", MAPPED)
    ours = t.rows("SELECT k.id, d.text FROM kernels k JOIN strings d ON d.id = k.demangled_id "
                  "WHERE d.text NOT LIKE '%gemm%' AND d.text NOT LIKE '%cutlass%' "
                  "ORDER BY k.api_start_ns")

    def args(kernel_id):
        return t.rows("SELECT param_index, offset, alloc_id, alloc_offset, access, access_source "
                      "FROM kernel_args WHERE kernel_id = ? ORDER BY offset", kernel_id)

    rw, r = (ACCESS_RW, SOURCE_ASSUMED), (ACCESS_R, SOURCE_CONST)
    expected = [
        ("axpy(float*, float const*, float, int)", [(0, 0, y, 0) + rw, (1, 8, x, 0) + r]),
        ("axpy(float*, float const*, float, int)", [(0, 0, y, 4096) + rw, (1, 8, x, 0) + r]),
        ("copy_pair(Pair, int)", [(0, 0, y, 0) + rw, (0, 8, x, 0) + rw]),
        ("axpy(float*, float const*, float, int)", [(0, 0, managed, 0) + rw, (1, 8, mapped, 0) + r]),
        ("scale_c", [(0, 0, y, 0) + rw, (2, 16, None, None, ACCESS_UNKNOWN, SOURCE_NONE)]),
    ]
    c.equal([name for _, name in ours], [name for name, _ in expected], "our kernels, in order")
    for (kernel_id, name), (_, rows) in zip(ours, expected):
        c.equal(args(kernel_id), rows, f"arguments of {name} (kernel {kernel_id})")
    c.equal(t.one("SELECT count(*) FROM kernel_args WHERE alloc_id = ?", gone), 0,
            "nothing resolves to freed memory")
    if "no cuBLAS here" in stdout:
        print("note: cuBLAS absent, SGEMM arguments not checked")
        return
    gemm_ids = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = ? "
                                     "ORDER BY id", DEVICE, 256 * 256 * 4)][:3]
    resolved = t.rows("SELECT k.id, group_concat(DISTINCT a.alloc_id) FROM kernels k "
                      "JOIN kernel_args a ON a.kernel_id = k.id WHERE k.id NOT IN (%s) "
                      "GROUP BY k.id" % ",".join(str(i) for i, _ in ours))
    c.expect(any(set(gemm_ids) <= {int(v) for v in ids.split(",")} for _, ids in resolved if ids),
             f"a cuBLAS kernel's arguments resolve to A, B and C {gemm_ids}: {resolved}")


def check_exec_self(c, traces):
    c.equal(len(traces), 2, "one trace per image")
    c.equal(len({t.meta("pid") for t in traces}), 1, "same pid")
    c.equal(sorted(t.meta("end_reason") or "" for t in traces), ["", "exec"],
            "the first image's trace ends at exec")
    for t in traces:
        common_checks(c, t)
        c.equal(t.rows("SELECT kind, bytes FROM memcpys"), [(HTOD, MiB)], f"{t.path} copy")


class Case:
    """A test: which app, its arguments, how the tracer is injected, what to check.

    route: "record" (apptracer record), "injection" (CUDA_INJECTION64_PATH),
    "cupti_in_use" (another CUPTI subscriber preloaded first, then injection).
    """

    def __init__(self, check, app=None, args=(), route="record", common=True):
        self.check, self.app, self.args, self.route, self.common = check, app, list(args), route, common


CASES = {
    "vector_add": Case(check_vector_add),
    "driver_vector_add": Case(check_driver_vector_add),
    "streams_events": Case(check_streams_events),
    "host_alloc_kinds": Case(check_host_alloc_kinds),
    "memsets": Case(check_memsets),
    "malloc_async": Case(check_malloc_async),
    "multithreaded": Case(check_multithreaded),
    "failing_call": Case(check_failing_call, common=False),
    "peer_copy": Case(check_peer_copy),
    "forking": Case(check_forking),
    "exit_from_thread": Case(check_exit_status("complete"), "exit_paths", ["thread-exit"]),
    "underscore_exit": Case(check_exit_status("complete"), "exit_paths", ["_exit"]),
    "abort_signal": Case(check_exit_status("incomplete", "signal 6"), "exit_paths", ["abort"],
                         common=False),
    "sigkill": Case(check_exit_status("incomplete"), "exit_paths", ["kill"], common=False),
    "device_reset": Case(check_device_reset, "exit_paths", ["device-reset"], common=False),
    "injection": Case(check_vector_add, "vector_add", route="injection"),
    "cupti_in_use": Case(None, "vector_add", route="cupti_in_use"),
    "exec_self": Case(check_exec_self),
    "kernel_args": Case(check_kernel_args),
}

# Cases whose check also reads the program's standard output.
NEEDS_STDOUT = {"kernel_args"}

# Cases whose check takes every trace the run wrote, not exactly one.
MULTI_TRACE = {"forking", "exec_self"}


def traced_command(case, args, program, output):
    env = dict(os.environ)
    if case.route == "record":
        return [args.apptracer, "record", "-o", output, "--", program] + case.args, env
    env["APPTRACER_OUTPUT"] = output
    env["CUDA_INJECTION64_PATH"] = args.library
    if case.route == "cupti_in_use":
        env["LD_PRELOAD"] = args.other_subscriber
    return [program] + case.args, env


APPTRACER = None  # set by main


def main():
    global APPTRACER
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("--apps", required=True, help="directory holding the test apps")
    parser.add_argument("--apptracer", required=True, help="the apptracer program")
    parser.add_argument("--library", required=True, help="libapptracer.so")
    parser.add_argument("--other-subscriber", required=True,
                        help="a library that takes CUPTI first (the bench's bare subscriber)")
    parser.add_argument("--keep", help="directory to keep the trace in")
    args = parser.parse_args()
    APPTRACER = args.apptracer

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
    c.equal(traced[1], plain[1], "stdout traced vs untraced")
    paths = sorted(glob.glob(os.path.join(out_dir, f"{args.case}-*.db")))
    traces = [Trace(p) for p in paths]
    if case.route == "cupti_in_use":
        ours = [line for line in traced[2].splitlines() if line.startswith("apptracer:")]
        c.equal(len(ours), 1, "one line from apptracer")
        c.expect(ours and "already in use" in ours[0], f"it says CUPTI is in use: {ours}")
        c.equal(paths, [], "no trace written")
    else:
        # `apptracer record` names the traces it wrote; everything else is the program's.
        program_stderr = "".join(line for line in traced[2].splitlines(keepends=True)
                                 if not line.startswith("apptracer: trace written to "))
        c.equal(program_stderr, plain[2], "stderr traced vs untraced")
        if case.route == "record":
            named = sorted(line.rsplit(" ", 1)[1] for line in traced[2].splitlines()
                           if line.startswith("apptracer: trace written to "))
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
    print(f"{args.case}: {'ok' if not c.failures else 'FAILED'} ({len(paths)} trace(s) in {out_dir})")
    return 0 if not c.failures else 1


if __name__ == "__main__":
    sys.exit(main())
