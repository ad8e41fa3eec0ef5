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
import csv
import ctypes
import glob
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

SKIPPED = 77
MiB = 1 << 20

# The enum values the checks compare with, by name: the numbers are read from
# each trace's enum_values table (load_enums), never copied here.
ENUM_NAMES = {
    "DEVICE": ("alloc_kind", "device"), "PINNED_HOST": ("alloc_kind", "pinned host"),
    "WRITE_COMBINED": ("alloc_kind", "write-combined host"), "MAPPED": ("alloc_kind", "mapped host"),
    "REGISTERED": ("alloc_kind", "registered host"), "MANAGED": ("alloc_kind", "managed"),
    "PAGEABLE_HOST": ("alloc_kind", "pageable host"), "POOL": ("alloc_kind", "pool"),
    "VMM_MAPPING": ("alloc_kind", "vmm mapping"),
    "HTOD": ("copy_kind", "HtoD"), "DTOH": ("copy_kind", "DtoH"), "DTOD": ("copy_kind", "DtoD"),
    "PREFETCH": ("copy_kind", "prefetch"),
    "MEM_PAGEABLE": ("memory_kind", "pageable"), "MEM_PINNED": ("memory_kind", "pinned"),
    "MEM_DEVICE": ("memory_kind", "device"), "MEM_MANAGED": ("memory_kind", "managed"),
    "SYNC_STREAM": ("sync_kind", "stream"), "SYNC_EVENT": ("sync_kind", "event"),
    "STREAM_BLOCKING": ("stream_kind", "blocking"), "STREAM_LEGACY": ("stream_kind", "legacy default"),
    "ACCESS_UNKNOWN": ("access_kind", "unknown"), "ACCESS_R": ("access_kind", "r"),
    "ACCESS_RW": ("access_kind", "rw"), "ACCESS_W": ("access_kind", "w"),
    "SOURCE_NONE": ("access_source", "none"), "SOURCE_ASSUMED": ("access_source", "assumed"),
    "SOURCE_CONST": ("access_source", "const signature"),
    "EVENT_RECORD": ("stream_event_kind", "record"), "EVENT_WAIT": ("stream_event_kind", "wait"),
    "DOMAIN_RUNTIME": ("api_domain", "runtime"),
    "UM_HTOD": ("um_counter_kind", "bytes HtoD"), "UM_DTOH": ("um_counter_kind", "bytes DtoH"),
    "UM_CPU_FAULT": ("um_counter_kind", "CPU page fault"),
    "UM_GPU_FAULT": ("um_counter_kind", "GPU page fault group"),
    "UM_REMOTE_MAP": ("um_counter_kind", "remote map"),
    "CAUSE_USER": ("um_migration_cause", "user"), "CAUSE_POLICY": ("um_remote_map_cause", "policy"),
    "ADVICE_READ_MOSTLY": ("mem_advice", "set read mostly"),
    "ADVICE_PREFERRED": ("mem_advice", "set preferred location"),
    "ADVICE_ACCESSED_BY": ("mem_advice", "set accessed by"),
    "LOCATION_DEVICE": ("mem_location_type", "device"), "LOCATION_HOST": ("mem_location_type", "host"),
    "PYTORCH_CACHING": ("sub_allocator", "pytorch caching allocator"),
    "CUPY_POOL": ("sub_allocator", "cupy memory pool"),
    "LAUNCH_GRAPH": ("launch_kind", "graph"),
}


def load_enums(db):
    """Sets the module's enum constants from a trace's enum_values table."""
    values = {(e, n): v for e, v, n in db.execute("SELECT enum, value, name FROM enum_values")}
    for constant, key in ENUM_NAMES.items():
        globals()[constant] = values[key]


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
        load_enums(self.db)

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
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE gpu_start_ns IS NULL AND kind != ?", PREFETCH),
            0, "every copy has GPU times (prefetches have none: they are um_events)")
    c.equal(t.one("SELECT count(*) FROM kernels WHERE gpu_start_ns IS NULL"), 0,
            "every kernel has GPU times")
    # A memset of 0 bytes does no GPU work (PyTorch issues them): no times.
    c.equal(t.one("SELECT count(*) FROM memsets WHERE gpu_start_ns IS NULL AND bytes > 0"), 0,
            "every memset of a byte or more has GPU times")
    # Says why where records were dropped: a writer that stalled (and for how
    # long it may), or what it gave up on.
    c.equal(t.meta("dropped_records"), "0",
            f"no records dropped (writer_stalls {t.meta('writer_stalls')}, gave_up {t.meta('gave_up')!r}, "
            f"producer_wait_ns {t.meta('producer_wait_ns')})")


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


def host_vectors(c, t):
    """The three std::vector buffers: host blocks that became rows when copied (when the
    allocator was interposed: not through CUDA_INJECTION64_PATH alone)."""
    if t.meta("host_allocations").startswith("unavailable"):
        c.equal(t.one("SELECT count(*) FROM allocations WHERE kind = ?", PAGEABLE_HOST), 0,
                "allocator not interposed: no host blocks")
        return [None] * 3
    host = t.rows("SELECT id, bytes, alloc_tid IS NOT NULL, free_ns IS NOT NULL FROM allocations "
                  "WHERE kind = ? ORDER BY alloc_ns", PAGEABLE_HOST)
    c.equal([r[1:] for r in host], [(4 * MiB, 1, 1)] * 3,
            "a_h, b_h, s_h: three 4 MiB pageable host blocks, thread known, freed")
    return [r[0] for r in host] if len(host) == 3 else [None] * 3


def check_vector_add(c, t):
    device = t.rows("SELECT id, bytes FROM allocations WHERE kind = ? ORDER BY id", DEVICE)
    c.equal([b for _, b in device], [4 * MiB] * 3, "three 4 MiB device allocations")
    c.equal(t.one("SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0, "all freed")
    ids = [i for i, _ in device]
    a_h, b_h, s_h = host_vectors(c, t)
    copies = t.rows("SELECT kind, bytes, src_alloc_id, dst_alloc_id, src_memory, dst_memory "
                    "FROM memcpys ORDER BY api_start_ns")
    c.equal(copies, [(HTOD, 4 * MiB, a_h, ids[0], MEM_PAGEABLE, MEM_DEVICE),
                     (HTOD, 4 * MiB, b_h, ids[1], MEM_PAGEABLE, MEM_DEVICE),
                     (DTOH, 4 * MiB, ids[2], s_h, MEM_DEVICE, MEM_PAGEABLE)], "copies")
    # The writer reads a host endpoint's pages when it drains the copy, after
    # this short program freed them; only a block the interposed allocator
    # saw freed has its node read at the free (blocks of 1 MiB or more).
    if not t.meta("host_allocations").startswith("unavailable"):
        c.expect(t.one("SELECT count(*) FROM memcpys WHERE coalesce(src_numa_node, dst_numa_node) "
                       "IS NULL") == 0, "each copy's host endpoint has a NUMA node")
    kernels = t.rows("SELECT m.text, d.text, grid_x, block_x FROM kernels k "
                     "JOIN strings m ON m.id = k.name_id JOIN strings d ON d.id = k.demangled_id")
    c.equal(kernels, [("_Z10vector_addPfPKfS1_i",
                       "vector_add(float*, float const*, float const*, int)", 4096, 256)], "kernel")
    c.equal(t.api_count("cudaMalloc"), 3, "cudaMalloc calls")
    c.equal(t.api_count("cudaMemcpy"), 3, "cudaMemcpy calls")
    c.equal(t.api_count("cudaLaunchKernel"), 1, "cudaLaunchKernel calls")
    # The driver launch inside the runtime launch is folded into its row.
    served = t.one("SELECT count(*) FROM api_calls r JOIN strings s ON s.id = r.driver_name_id "
                   "WHERE s.text LIKE 'cuLaunchKernel%' AND r.domain = ?", DOMAIN_RUNTIME)
    c.equal(served, 1, "cudaLaunchKernel's row names the cuLaunchKernel it made")
    c.equal(t.one("SELECT count(*) FROM api_calls a JOIN kernels k ON k.call_correlation_id = "
                  "a.correlation_id WHERE a.stream = k.stream"), 1,
            "cudaLaunchKernel's row names the stream its kernel ran on")
    c.equal(t.one("SELECT count(*) FROM api_calls WHERE parent_correlation_id IS NOT NULL"), 0,
            "no driver call of its own inside a runtime call")
    joined = t.one("SELECT count(*) FROM kernels k JOIN api_calls a "
                   "ON a.correlation_id = k.call_correlation_id AND a.domain = ?", DOMAIN_RUNTIME)
    c.equal(joined, 1, "kernel joins its runtime call by correlation id")
    a_d, b_d, s_d = ids
    # Fig. 6.1: a_h -> a_d', b_h -> b_d', a_d' -> s_d', b_d' -> s_d', s_d' -> s_h'.
    c.equal(dvdg_edges(t), [(a_h, 0, a_d, 1, "copy"), (b_h, 0, b_d, 1, "copy"),
                            (a_d, 1, s_d, 1, "kernel"), (b_d, 1, s_d, 1, "kernel"),
                            (s_d, 1, s_h, 1, "copy")], "the DVDG of Fig. 6.1")


def check_driver_vector_add(c, t):
    c.equal(t.rows("SELECT bytes FROM allocations WHERE kind = ?", DEVICE), [(4 * MiB,)] * 3,
            "three cuMemAlloc allocations")
    ids = [r[0] for r in t.rows("SELECT id FROM allocations WHERE kind = ? ORDER BY id", DEVICE)]
    a_h, b_h, s_h = host_vectors(c, t)
    copies = t.rows("SELECT kind, bytes, src_alloc_id, dst_alloc_id FROM memcpys ORDER BY api_start_ns")
    c.equal(copies, [(HTOD, 4 * MiB, a_h, ids[0]), (HTOD, 4 * MiB, b_h, ids[1]),
                     (DTOH, 4 * MiB, ids[2], s_h)], "driver copies")
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
    kinds = dict(t.rows("SELECT kind, count(*) FROM allocations WHERE kind != ? GROUP BY kind",
                        PAGEABLE_HOST))
    c.equal(kinds, {DEVICE: 2, PINNED_HOST: 2, MAPPED: 1, WRITE_COMBINED: 1, REGISTERED: 1, MANAGED: 1},
            "allocation kinds")
    c.expect(t.one("SELECT count(*) FROM allocations WHERE kind IN (?, ?, ?, ?) AND numa_node IS NULL",
                   PINNED_HOST, MAPPED, WRITE_COMBINED, REGISTERED) == 0,
             "page-locked allocations have a NUMA node")
    flags = dict(t.rows("SELECT kind, flags FROM allocations WHERE kind IN (?, ?)", MAPPED, WRITE_COMBINED))
    c.equal(flags, {MAPPED: 2, WRITE_COMBINED: 4}, "cudaHostAlloc flags kept")
    sources = t.rows("SELECT a.kind, m.src_memory FROM memcpys m LEFT JOIN allocations a "
                     "ON a.id = m.src_alloc_id WHERE m.kind = ? AND m.width IS NULL "
                     "ORDER BY m.api_start_ns", HTOD)
    c.equal(sources, [(PINNED_HOST, MEM_PINNED), (PINNED_HOST, MEM_PINNED), (MAPPED, MEM_PINNED),
                      (WRITE_COMBINED, MEM_PINNED), (REGISTERED, MEM_PINNED),
                      (PAGEABLE_HOST, MEM_PAGEABLE)],
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


def check_peer_store(exact):
    """GPU 0's kernels store 16 MiB into GPU 1's buffer and read it back over
    peer access: their arguments resolve to GPU 1's allocation, and `stats
    --report kernel_traffic` puts the bytes on the peer paths (exact under
    --exact; else a bound: the store's non-const pointer may read too)."""
    def check(c, t):
        on1 = t.rows("SELECT id FROM allocations WHERE kind = ? AND device = 1 AND bytes = ?",
                     DEVICE, 16 * MiB)
        c.equal(len(on1), 1, "GPU 1's 16 MiB buffer")
        if not on1:
            return
        on1 = on1[0][0]
        kernels = t.rows("SELECT k.id, k.device, d.text FROM kernels k JOIN strings d ON d.id = k.demangled_id "
                         "ORDER BY k.api_start_ns")
        c.equal([(device, name.split("(")[0]) for _, device, name in kernels],
                [(0, "store_values"), (0, "sum_values")], "both kernels on GPU 0")
        for kernel_id, _, name in kernels:
            args = t.rows("SELECT alloc_id, alloc_offset FROM kernel_args WHERE kernel_id = ? AND offset = 0",
                          kernel_id)
            c.equal(args, [(on1, 0)], f"{name}: its pointer resolves to GPU 1's buffer")
        report = subprocess.run([APPTRACER, "stats", "--report", "kernel_traffic", "--format", "csv", t.path],
                                capture_output=True, text=True)
        c.equal(report.returncode, 0, f"stats --report kernel_traffic: {report.stderr.strip()}")
        lines = [line for line in csv.reader(report.stdout.splitlines()) if line]
        header = next((line for line in lines if line[0] == "path"), [])
        rows = {(r["path"], r["kind"]): r for r in (dict(zip(header, line)) for line in lines)
                if r.get("path") != "path"}
        bytes_are = "exact" if exact else "bound"
        store = rows.get(("PtoP.peer.gpu0.gpu1", "kernel peer stores"), {})
        c.equal((store.get("kernels"), store.get("bytes"), store.get("bytes_are")),
                ("1", str(16 * MiB), bytes_are), f"16 MiB stored from GPU 0 into GPU 1: {report.stdout}")
        load = rows.get(("PtoP.peer.gpu1.gpu0", "kernel peer loads"), {})
        # Without --exact the store's pointer (not const) may have read the buffer too.
        c.equal((load.get("kernels"), load.get("bytes"), load.get("bytes_are")),
                ("1", str(16 * MiB), "exact") if exact else ("2", str(32 * MiB), "bound"),
                f"the read back over GPU 1 -> GPU 0: {report.stdout}")
    return check


FORK_SIZES = {1 * MiB, 2 * MiB, 4 * MiB}


def check_forking_ending(children_status, children_reason=None):
    def check(c, traces):
        c.equal(len(traces), 3, "one trace per process")
        sizes = set()
        parent_pid = {t.meta("ppid") for t in traces} & {t.meta("pid") for t in traces}
        for t in traces:
            child = t.meta("pid") not in parent_pid
            c.equal(t.meta("status"), children_status if child else "complete", f"{t.path} status")
            if child and children_reason:
                c.equal(t.meta("end_reason"), children_reason, f"{t.path} end_reason")
            sizes.update(b for (b,) in t.rows("SELECT bytes FROM allocations"))
            c.equal(t.one("SELECT count(*) FROM memcpys"), 2, f"{t.path} copies")
            c.expect(t.one("SELECT count(*) FROM devices") >= 1, f"{t.path}: its first context seen (devices)")
        c.equal(sizes, FORK_SIZES, "each process traced its own allocation")
        c.equal(len({t.meta("pid") for t in traces}), 3, "distinct pids")
    return check


def check_exit_status(status, reason=None):
    def check(c, t):
        c.equal(t.meta("status"), status, "meta.status")
        if reason:
            c.equal(t.meta("end_reason"), reason, "meta.end_reason")
        c.equal(t.rows("SELECT kind, bytes FROM allocations ORDER BY kind"),
                [(DEVICE, MiB), (PAGEABLE_HOST, MiB)],
                "the allocations made before the end (device buffer, host vector copied from)")
        c.equal(t.rows("SELECT kind, bytes FROM memcpys"), [(DTOH, MiB)], "the copy made before the end")
        c.equal(t.one("SELECT count(*) FROM memsets"), 1, "the memset made before the end")
    return check


def check_signal_before_context(c, t):
    """SIGTERM before the first CUDA context: the trace still holds what came before it."""
    c.equal(t.meta("status"), "incomplete", "meta.status")
    c.equal(t.meta("end_reason"), "signal 15", "meta.end_reason")
    c.equal(t.rows("SELECT kind, bytes FROM allocations WHERE bytes = ?", MiB), [(PAGEABLE_HOST, MiB)],
            "the host block allocated before the signal")
    c.equal(t.one("SELECT count(*) FROM allocations WHERE kind = ?", DEVICE), 0, "no device memory yet")


def check_device_reset(c, t):
    common_checks(c, t)
    c.equal(t.rows("SELECT bytes FROM allocations WHERE kind = ?", DEVICE), [(MiB,), (MiB,)],
            "work before and after the reset")
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
        # The cookie looks like an address but points into nothing live: no row.
        ("scale_c", [(0, 0, y, 0) + rw]),
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


def check_exact_sgemm(c, t, kernels, accesses):
    """cuBLAS's own kernels under --exact: A and B read whole and never written,
    C written whole and (beta 0) never read; across however many kernels
    cuBLAS chose, and whatever workspace of its own it touched."""
    gemm = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = 40000 "
                                 "ORDER BY id", DEVICE)]
    if not gemm:
        print("note: cuBLAS absent, SGEMM under --exact not checked")
        return
    c.equal(len(gemm), 3, "three 40,000-byte matrices for the SGEMM")
    c.expect(kernels, "cuBLAS launched kernels of its own")
    spans = {(a, access): [] for a in gemm for access in (ACCESS_R, ACCESS_W, ACCESS_RW)}
    for kernel_id, _ in kernels:
        for a, lo, hi, access, _ in accesses(kernel_id):
            if a in gemm:
                spans[(a, access)].append((lo, hi))

    def covered(pieces):
        """The union of [lo, hi) pieces, merged."""
        merged = []
        for lo, hi in sorted(pieces):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        return merged
    for role, a in (("A", gemm[0]), ("B", gemm[1])):
        c.equal(covered(spans[(a, ACCESS_R)]), [(0, 40000)], f"SGEMM's {role} read whole")
        c.equal(spans[(a, ACCESS_W)] + spans[(a, ACCESS_RW)], [], f"SGEMM's {role} never written")
    c.equal(covered(spans[(gemm[2], ACCESS_W)]), [(0, 40000)], "SGEMM's C written whole")
    c.equal(spans[(gemm[2], ACCESS_R)] + spans[(gemm[2], ACCESS_RW)], [], "SGEMM's C never read (beta 0)")


def check_exact_patterns(c, t):
    """--exact: every kernel's ranges, to the 32-byte granule, per buffer (found by size)."""
    c.equal(t.meta("exact"), "on", "meta.exact")
    print(f"note: --exact path: {t.meta('exact_path')}")
    buffer = {}
    for k in range(12):
        size = 4096 if k == 10 else 4096 * (k + 2)
        row = t.rows("SELECT id, address FROM allocations WHERE kind = ? AND bytes = ?", DEVICE, size)
        if len(row) != 1:
            c.expect(False, f"buffer {k} ({size} bytes): expected one allocation, got {row}")
            return
        buffer[row[0][0]] = k
    c.equal(t.one("SELECT count(*) FROM exact_launches WHERE kernel_id IS NULL"), 0,
            "every --exact launch joined its kernels row")
    R, W, RW = ACCESS_R, ACCESS_W, ACCESS_RW
    expected = {
        "partial_write(float*)": [(0, 0, 4096, W)],
        "strided_read(float const*, float*)":
            [(1, 64 * i, 64 * i + 32, R) for i in range(64)] + [(2, 0, 256, W)],
        "only_read(float*, float*)": [(3, 0, 4096, R), (4, 0, 4096, W)],
        "in_place(float*)": [(5, 0, 4096, RW)],
        "write_then_read(float*, float*)": [(6, 0, 4096, W), (7, 0, 4096, W)],
        "histogram(int const*, int*)": [(8, 0, 4096, R), (9, 0, 32, RW)],
    }
    kernels = t.rows("SELECT k.id, d.text FROM kernels k JOIN strings d ON d.id = k.demangled_id "
                     "ORDER BY k.api_start_ns")
    ours_last = "read_past(float const*, float*)"
    cublas = [(k, name) for k, name in kernels if name not in expected and name != ours_last]
    kernels = [(k, name) for k, name in kernels if (k, name) not in cublas]
    c.equal(len(kernels), 7, "seven kernels of the app's own")
    inexact = t.rows("SELECT e.kernel_id, e.approximate, v.name FROM exact_launches e "
                     "JOIN enum_values v ON v.enum = 'exact_gap' AND v.value = e.incomplete "
                     "WHERE e.approximate != 0 OR v.name != 'none'")
    ours_ids = {k for k, _ in kernels}
    c.equal([row for row in inexact if row[0] in ours_ids], [],
            "none of the app's launches approximate or incomplete")
    for kernel_id, approximate, gap in inexact:
        if kernel_id not in ours_ids:
            print(f"note: cuBLAS kernel {kernel_id} under --exact: approximate {approximate},"
                  f" incomplete: {gap}")

    def accesses(kernel_id):
        return t.rows("SELECT e.alloc_id, e.lo - a.address, e.hi - a.address, e.access, e.lo "
                      "FROM exact_kernel_accesses e LEFT JOIN allocations a ON a.id = e.alloc_id "
                      "WHERE e.kernel_id = ? ORDER BY e.lo", kernel_id)
    for kernel_id, name in kernels:
        rows = accesses(kernel_id)
        ours = sorted((buffer[a], lo, hi, access) for a, lo, hi, access, _ in rows if a in buffer)
        if name in expected:
            c.equal(ours, sorted(expected[name]), f"exact ranges of {name}")
            continue
        c.equal(name, ours_last, "the last kernel")
        c.equal(ours, [(10, 0, 4096, R), (11, 0, 4096, W)], f"exact ranges of {name} in its buffers")
        past = [(a, lo) for a, lo, hi, access, _ in rows
                if a not in buffer and access == R and hi - lo == 32]
        c.equal(len(past), 1, f"one 32-byte read past the 4 KiB it was handed: {rows}")
    check_exact_sgemm(c, t, cublas, accesses)
    report = subprocess.run([APPTRACER, "stats", "--report", "exact", "--format", "csv", t.path],
                            capture_output=True, text=True)
    c.equal(report.returncode, 0, f"stats --report exact: {report.stderr.strip()}")
    lines = list(csv.reader(report.stdout.splitlines()))
    header = next((line for line in lines if line and line[0] == "kernel"), [])
    only_read = [dict(zip(header, line)) for line in lines if line and line[0].startswith("only_read")]
    c.expect(only_read and (only_read[0].get("rw_only_read"), only_read[0].get("rw_only_written"))
             == ("1", "1"), f"the report says only_read's x was only read, y only written: "
             f"{report.stdout}")


def dvdg_json(c, t):
    """The trace's DVDG as `apptracer dvdg --format json -o -` gives it (not stored)."""
    result = subprocess.run([APPTRACER, "dvdg", "--no-store", t.path, "--format", "json", "-o", "-"],
                            capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer dvdg: {result.stderr.strip()}")
    return json.loads(result.stdout) if result.returncode == 0 else {"values": [], "ops": [], "edges": []}


def uninitialized_reads(graph):
    """The DVDG's reads of memory nothing wrote: (reader, value) labels."""
    ops = {op["id"]: op["name"] for op in graph["ops"]}
    values = {value["id"]: value["label"] for value in graph["values"]}
    return [(ops.get(e["op"]), values.get(e["src"])) for e in graph["edges"] if e["uninitialized_read"]]


def exact_coverage(t, kernel_id):
    """What record --exact stored of a launch's coverage: {alloc_id (None: the launch): name}."""
    return dict(t.rows("SELECT c.alloc_id, v.name FROM exact_coverage c JOIN enum_values v "
                       "ON v.enum = 'exact_coverage' AND v.value = c.coverage WHERE c.kernel_id = ?",
                       kernel_id))


def exact_gap(t, kernel_id):
    return t.one("SELECT v.name FROM exact_launches e JOIN enum_values v ON v.enum = 'exact_gap' "
                 "AND v.value = e.incomplete WHERE e.kernel_id = ?", kernel_id)


def check_exact_tma(c, t):
    """Bulk copies are seen by the sanitizer, TMA tensor copies are not: the
    tensor kernel's launch is incomplete and not covered, so its arguments'
    accesses stand; the plain kernel reading both outputs keeps its exact
    ranges, and nothing is read uninitialized."""
    c.equal(t.meta("exact"), "on", "meta.exact")
    print(f"note: --exact path: {t.meta('exact_path')}")
    buffers = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = 32768 "
                                    "ORDER BY id", DEVICE)]
    if len(buffers) != 5:
        c.expect(False, f"five 32 KiB device buffers, found {buffers}")
        return
    bulk_in, bulk_out, tensor_in, tensor_out, total = buffers
    kernel = {}
    for kernel_id, name in t.rows("SELECT k.id, d.text FROM kernels k JOIN strings d ON d.id = k.demangled_id"):
        for short in ("bulk_copy(", "tensor_copy(", "sum_outputs("):
            if short in name:
                kernel[short[:-1]] = kernel_id
    if len(kernel) != 3:
        c.expect(False, f"the three kernels, found {kernel}")
        return
    c.equal(exact_gap(t, kernel["bulk_copy"]), "none", "bulk copies are seen: bulk_copy complete")
    c.equal(exact_gap(t, kernel["tensor_copy"]), "TMA tensor copies", "tensor_copy incomplete")
    c.equal(exact_gap(t, kernel["sum_outputs"]), "none", "sum_outputs complete")

    def ranges(kernel_id):
        return sorted(t.rows("SELECT e.alloc_id, e.lo - a.address, e.hi - a.address, e.access "
                             "FROM exact_kernel_accesses e JOIN allocations a ON a.id = e.alloc_id "
                             "WHERE e.kernel_id = ?", kernel_id))
    R, W = ACCESS_R, ACCESS_W
    c.equal(ranges(kernel["bulk_copy"]), [(bulk_in, 0, 32768, R), (bulk_out, 0, 32768, W)],
            "bulk_copy's bulk copies, exact")
    c.equal(ranges(kernel["sum_outputs"]),
            sorted([(bulk_out, 0, 32768, R), (tensor_out, 0, 32768, R), (total, 0, 32768, W)]),
            "sum_outputs's exact ranges")
    c.equal([r for r in ranges(kernel["tensor_copy"]) if r[0] in (tensor_in, tensor_out)], [],
            "the sanitizer sees none of tensor_copy's tensor copies")
    c.equal(exact_coverage(t, kernel["bulk_copy"]), {None: "exact", bulk_in: "exact", bulk_out: "exact"},
            "bulk_copy's coverage")
    c.equal(exact_coverage(t, kernel["sum_outputs"]),
            {None: "exact", bulk_out: "exact", tensor_out: "exact", total: "exact"}, "sum_outputs's coverage")
    tensor_coverage = exact_coverage(t, kernel["tensor_copy"])
    c.equal(tensor_coverage.get(None), "none", "tensor_copy's launch not covered")
    resolved = tensor_coverage.keys() - {None}
    c.equal({tensor_coverage[a] for a in resolved} - {"none"}, set(), "tensor_copy's pointers not covered")
    print(f"note: tensor_copy's tensor maps resolved to {sorted(resolved)} "
          f"(tensor_in {tensor_in}, tensor_out {tensor_out})")

    graph = dvdg_json(c, t)
    c.equal(uninitialized_reads(graph), [], "no uninitialized read")
    op_of = {op["source_id"]: op["id"] for op in graph["ops"] if op["kind"] == "kernel"}
    value = {v["id"]: v for v in graph["values"]}
    read_by_sum = {value[e["src"]]["alloc_id"] for e in graph["edges"]
                   if e["op"] == op_of.get(kernel["sum_outputs"]) and e["kind"] == "data"}
    c.equal(read_by_sum, {bulk_out, tensor_out}, "sum_outputs reads the two outputs and nothing else")
    written_by_sum = {v["alloc_id"] for v in graph["values"] if v.get("producer_op") == op_of.get(kernel["sum_outputs"])}
    c.equal(written_by_sum, {total}, "sum_outputs writes only its result (its exact ranges)")
    if tensor_out in resolved:
        producers = {value[e["src"]].get("producer_op") for e in graph["edges"]
                     if e["op"] == op_of.get(kernel["sum_outputs"]) and value[e["src"]]["alloc_id"] == tensor_out}
        c.equal(producers, {op_of.get(kernel["tensor_copy"])},
                "what sum_outputs read of tensor_out, tensor_copy wrote (its arguments' access)")


def check_exact_pytorch_conv_gemm(c, t):
    """cuDNN's and cuBLAS's Hopper kernels under --exact: launches the
    sanitizer cannot see whole are not covered, and a correct program reads
    nothing uninitialized."""
    c.equal(t.meta("exact"), "on", "meta.exact")
    launches = t.rows("SELECT d.text, v.name, c.coverage IS NOT NULL FROM exact_launches e "
                      "JOIN kernels k ON k.id = e.kernel_id JOIN strings d ON d.id = k.demangled_id "
                      "JOIN enum_values v ON v.enum = 'exact_gap' AND v.value = e.incomplete "
                      "LEFT JOIN exact_coverage c ON c.launch_id = e.id AND c.alloc_id IS NULL")
    c.expect(launches and all(stored for _, _, stored in launches), "every launch's coverage stored")
    hopper = [(name, gap) for name, gap, _ in launches if name.startswith(("sm90_", "nvjet_"))]
    print(f"note: {len(hopper)} launches of cuDNN/cuBLAS Hopper kernels, "
          f"{sum(gap != 'none' for _, gap in hopper)} of them incomplete")
    c.expect(hopper, "cuDNN or cuBLAS ran Hopper kernels (sm90_*, nvjet_*)")
    graph = dvdg_json(c, t)
    reads = uninitialized_reads(graph)
    c.equal(len(reads), 0, f"no uninitialized read (the first: {reads[:3]})")
    findings = diagnose_findings(c, t)
    c.equal([f["what"] for f in findings if f["rule"] == "uninitialized_read"], [],
            "no uninitialized_read finding")


def check_exec_self(c, traces):
    c.equal(len(traces), 2, "one trace per image")
    c.equal(len({t.meta("pid") for t in traces}), 1, "same pid")
    c.equal(sorted(t.meta("end_reason") or "" for t in traces), ["", "exec"],
            "the first image's trace ends at exec")
    for t in traces:
        common_checks(c, t)
        c.equal(t.rows("SELECT kind, bytes FROM memcpys"), [(HTOD, MiB)], f"{t.path} copy")


def check_host_copies(c, t):
    """Each copy's host endpoint resolves to the block it lies in, at the right offset."""
    def block(size):
        rows = t.rows("SELECT id, flags, numa_node, free_ns IS NOT NULL FROM allocations "
                      "WHERE kind = ? AND bytes = ?", PAGEABLE_HOST, size)
        c.equal(len(rows), 1, f"one pageable host row of {size} bytes")
        return rows[0] if rows else (None, None, None, None)
    malloc_id, malloc_flags, malloc_node, malloc_freed = block(MiB + 1)
    new_id, _, _, _ = block(MiB + 2)
    mmap_id, mmap_flags, _, _ = block(MiB + 3)
    registered_block, _, _, _ = block(MiB + 4)
    c.equal((malloc_flags, mmap_flags), (0, 1), "malloc block flags 0, mmap region flags 1")
    c.expect(malloc_node is not None, "the malloc'd block's NUMA node, read when it was copied")
    c.equal(malloc_freed, 1, "the malloc'd block was freed")
    c.equal(t.one("SELECT count(*) FROM allocations WHERE bytes = ?", MiB + 5), 0,
            "a block CUDA never touched is no row")
    registered = t.one("SELECT id FROM allocations WHERE kind = ?", REGISTERED)
    copies = t.rows("SELECT kind, bytes, src_alloc_id, src_offset, src_memory, dst_alloc_id, "
                    "dst_offset FROM memcpys ORDER BY api_start_ns")
    device = t.one("SELECT id FROM allocations WHERE kind = ?", DEVICE)
    c.equal(copies, [(HTOD, MiB, malloc_id, 0, MEM_PAGEABLE, device, 0),
                     (HTOD, MiB - 4096, new_id, 4096, MEM_PAGEABLE, device, MiB),
                     (HTOD, MiB, mmap_id, 0, MEM_PAGEABLE, device, 2 * MiB),
                     (HTOD, 4096, None, None, MEM_PAGEABLE, device, 3 * MiB),
                     (DTOH, 1000, device, MiB, MEM_DEVICE, malloc_id, 8192),
                     (HTOD, MiB, registered, 0, MEM_PINNED, device, 0)],
            "malloc, new[] interior, mmap, stack (no allocation), DtoH into the malloc'd block, "
            "registered")
    c.expect(registered_block is not None, "registering a malloc'd block makes it a row too")
    nodes = t.rows("SELECT src_numa_node IS NOT NULL, dst_numa_node IS NOT NULL FROM memcpys "
                   "ORDER BY api_start_ns")
    c.equal(nodes, [(1, 0), (1, 0), (1, 0), (1, 0), (0, 1), (1, 0)],
            "every host endpoint has a NUMA node (the registered one from its allocation)")
    c.expect(t.one("SELECT count(*) FROM devices WHERE numa_node IS NOT NULL") >= 1,
             "the GPU's NUMA node")


# --- unified memory (um_bandwidth) ---------------------------------------------
#
# What CUPTI delivers on the H100 (driver 580, CUPTI 13.0) sets the thresholds:
# a burst of fault-driven migrations is reported only in part (40-70% of the
# bytes of a 256 MiB array, almost none of its GPU page-fault groups; CUPTI
# says nothing of the loss), while prefetches and advice-time remote mappings
# are reported whole.

UM_SIZE, UM_SMALL, UM_RUNS, UM_TILE = 256 * MiB, 64 * MiB, 5, 16 * MiB
UM_TIMING = "um_bandwidth: run "


UM_ALL = ["--unified-memory", "all"]


def um_args(size=UM_SIZE, *more):
    return ["--size", str(size), "--mode", "read", "--runs", str(UM_RUNS)] + list(more)


class UmRuns:
    """The managed array and its runs: one kernel each, whose GPU time window
    the unified-memory events inside it are attributed to."""

    def __init__(self, c, t, size=UM_SIZE):
        self.t, self.size = t, size
        self.alloc = t.one("SELECT id FROM allocations WHERE kind = ? AND bytes = ?", MANAGED, size)
        self.base = t.one("SELECT address FROM allocations WHERE id = ?", self.alloc)
        self.windows = t.rows("SELECT gpu_start_ns, gpu_end_ns, api_start_ns FROM kernels "
                              "ORDER BY gpu_start_ns")
        c.expect(self.alloc is not None, f"the {size // MiB} MiB managed allocation")
        c.equal(len(self.windows), UM_RUNS, "one kernel per run")
        c.expect("bytes HtoD" in (t.meta("um_counters") or "").split(";")[0],
                 f"meta.um_counters enables bytes HtoD: {t.meta('um_counters')}")

    def in_run(self, run, what, kind):
        start, end, _ = self.windows[run]
        return self.t.one(f"SELECT coalesce({what}, 0) FROM um_events WHERE counter_kind = ? "
                          "AND alloc_id = ? AND start_ns BETWEEN ? AND ?", kind, self.alloc, start, end)

    def per_run(self, what, kind):
        return [self.in_run(run, what, kind) for run in range(len(self.windows))]

    def of_array(self, what, kind, cause=None):
        extra, args = ("AND cause = ?", (cause,)) if cause is not None else ("", ())
        return self.t.one(f"SELECT coalesce({what}, 0) FROM um_events WHERE counter_kind = ? "
                          f"AND alloc_id = ? {extra}", kind, self.alloc, *args)

    def report(self):
        """What each run moved, printed with every um case to keep thresholds honest."""
        print(f"per run (the array): HtoD MiB "
              f"{[round(b / MiB, 1) for b in self.per_run('sum(bytes)', UM_HTOD)]}, "
              f"GPU fault rows {self.per_run('count(*)', UM_GPU_FAULT)}, "
              f"remote-map rows {self.per_run('count(*)', UM_REMOTE_MAP)}")
        print("whole trace (kind, rows, bytes, unresolved rows):",
              self.t.rows("SELECT counter_kind, count(*), sum(bytes), sum(alloc_id IS NULL) "
                          "FROM um_events GROUP BY counter_kind"))

    def check_resolution(self, c):
        """Events inside the array name it; the rest (the program's __managed__
        variable) lie in no allocation and are stored unresolved."""
        c.equal(self.t.one("SELECT count(*) FROM um_events WHERE address BETWEEN ? AND ? "
                           "AND alloc_id IS NOT ?", self.base, self.base + self.size - 1, self.alloc),
                0, "every event inside the array resolves to it")
        c.expect(self.t.one("SELECT count(*) FROM um_events WHERE alloc_id IS NULL") > 0,
                 "the __managed__ total's migrations are stored, unresolved")


# --- CUDA graphs (graphs.cu) ---------------------------------------------------

GRAPH_LAUNCHES = 100


def graph_buffers(c, t):
    """x, y, z (4 MiB device) and in, out (pinned host), in allocation order."""
    device = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = ? "
                                   "ORDER BY id", DEVICE, 4 * MiB)]
    pinned = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = ? "
                                   "ORDER BY id", PINNED_HOST, 4 * MiB)]
    c.equal((len(device), len(pinned)), (3, 2), "x, y, z on the device, in and out pinned")
    return (device + pinned) if len(device) == 3 and len(pinned) == 2 else [None] * 5


def axpy_kernels(t):
    return t.rows("SELECT k.id, k.launch_kind, k.api_start_ns IS NOT NULL FROM kernels k "
                  "JOIN strings d ON d.id = k.demangled_id WHERE d.text LIKE 'axpy(%' "
                  "ORDER BY k.gpu_start_ns")


def pointer_args(t, kernel_id):
    return t.rows("SELECT param_index, alloc_id, access FROM kernel_args WHERE kernel_id = ? "
                  "AND alloc_id IS NOT NULL ORDER BY offset", kernel_id)


def check_graph_work(c, t, launches, inputs):
    """`launches` launches of the four-node graph; the kernel of each read inputs[i]."""
    x, y, z, host_in, host_out = graph_buffers(c, t)
    kernels = axpy_kernels(t)
    c.equal(len(kernels), launches, "one axpy row per graph launch")
    c.equal({(kind, has_start) for _, kind, has_start in kernels}, {(LAUNCH_GRAPH, 1)},
            "each ran by a graph launch, with the launch's call time")
    buffers = {"x": x, "z": z}
    resolved = [pointer_args(t, k) == [(0, y, ACCESS_RW), (1, buffers[i], ACCESS_R)]
                for (k, _, _), i in zip(kernels, inputs)]
    c.equal(sum(resolved), launches, "each graph-run axpy's pointers resolve to y (rw) and its input")
    copies = t.rows("SELECT src_alloc_id, dst_alloc_id, count(*) FROM memcpys "
                    "WHERE graph_node_id IS NOT NULL GROUP BY 1, 2 ORDER BY 3, 1")
    c.equal(sorted(copies), sorted([(host_in, x, launches), (y, host_out, launches)]),
            "the graph's copies resolve: in -> x, y -> out")
    c.equal(t.rows("SELECT alloc_id, count(*) FROM memsets WHERE graph_node_id IS NOT NULL "
                   "GROUP BY 1"), [(y, launches)], "the graph's memsets resolve to y")
    # The H100 (CUDA 13.0) adds one kernel node of its own to the exec at
    # instantiation, with no template, that runs nothing: allowed, if idle.
    c.equal(t.rows("SELECT template_node_id IS NOT NULL, count(*) FROM graph_nodes "
                   "WHERE template_node_id IS NOT NULL OR graph_id NOT IN "
                   "(SELECT graph_id FROM graph_nodes WHERE template_node_id IS NOT NULL) "
                   "GROUP BY 1"),
            [(0, 4), (1, 4)], "four nodes made, and the exec's copy of each")
    c.equal(t.one("SELECT count(*) FROM graph_nodes g WHERE template_node_id IS NULL AND graph_id IN "
                  "(SELECT graph_id FROM graph_nodes WHERE template_node_id IS NOT NULL) AND "
                  "(EXISTS (SELECT 1 FROM kernels k WHERE k.graph_node_id = g.node_id) OR "
                  " EXISTS (SELECT 1 FROM memcpys m WHERE m.graph_node_id = g.node_id) OR "
                  " EXISTS (SELECT 1 FROM memsets m WHERE m.graph_node_id = g.node_id))"), 0,
            "nodes the driver added to the exec ran no work")
    c.equal(t.one("SELECT count(*) FROM kernels k JOIN graph_nodes g ON g.node_id = k.graph_node_id "
                  "WHERE g.template_node_id IS NOT NULL"), launches,
            "a graph-run kernel names the exec's node")


def traced_twin(app, app_args):
    """Traces another run of an app, the twin the case compares with; None if it failed."""
    out = tempfile.mkdtemp(prefix=f"apptracer-{app}-twin-")
    program = os.path.join(os.path.abspath(ARGS.apps), app)
    command, env = traced_command(Case(None, app, app_args), ARGS, program,
                                  os.path.join(out, "twin-%p.db"))
    status = run(command, env)[0]
    paths = glob.glob(os.path.join(out, "twin-*.db"))
    return Trace(paths[0]) if status == 0 and len(paths) == 1 else None


def dvdg_by_allocation_order(t):
    """dvdg_edges with allocations named by their rank in allocation order."""
    rank = {i: r for r, (i,) in enumerate(t.rows("SELECT id FROM allocations ORDER BY alloc_ns, id"))}
    return [(rank.get(s), sv, rank.get(d), dv, kind) for s, sv, d, dv, kind in dvdg_edges(t)]


def check_graph_twin(c, t):
    eager = traced_twin("graphs", ["eager"])
    if eager is None:
        c.expect(False, "the eager twin (graphs eager) left no trace")
        return
    c.equal(dvdg_by_allocation_order(t), dvdg_by_allocation_order(eager),
            "the DVDG is that of the same work run eagerly")


def check_graphs_explicit(c, t):
    check_graph_work(c, t, GRAPH_LAUNCHES, ["x"] * GRAPH_LAUNCHES)
    c.equal(t.one("SELECT count(*) FROM graph_nodes WHERE captured = 1"), 0, "none captured")
    check_graph_twin(c, t)


def check_graphs_capture(c, t):
    check_graph_work(c, t, GRAPH_LAUNCHES, ["x"] * GRAPH_LAUNCHES)
    c.equal(t.one("SELECT count(*) FROM graph_nodes WHERE captured = 1 AND "
                  "call_correlation_id IS NOT NULL"), 4, "the four captured calls made the nodes")
    c.equal(t.api_count("cudaLaunchKernel"), 1, "the captured launch is still an API call")
    c.equal(t.one("SELECT count(*) FROM kernels WHERE launch_kind != ?", LAUNCH_GRAPH), 0,
            "the captured launch ran nothing: no kernel row of its own")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE graph_node_id IS NULL"), 0,
            "the captured copies ran nothing")
    c.equal(t.one("SELECT count(*) FROM memsets WHERE graph_node_id IS NULL"), 1,
            "only z's eager memset: the captured one ran nothing")
    check_graph_twin(c, t)


def check_graphs_update(c, t):
    # cudaGraphExecKernelNodeSetParams between the launches: the second reads z.
    check_graph_work(c, t, 2, ["x", "z"])


def check_um_migrates_once(c, t):
    """No placement advice: run 1 faults the array over, later runs find it there."""
    um = UmRuns(c, t)
    if c.failures:
        return
    um.report()
    htod = um.per_run("sum(bytes)", UM_HTOD)
    c.expect(UM_SIZE // 4 <= htod[0] <= UM_SIZE * 11 // 10,
             f"run 1 migrates the array (at least the quarter CUPTI always reports): {htod[0]} bytes")
    c.expect(all(b < UM_SIZE // 20 for b in htod[1:]), f"later runs migrate < 5%: {htod}")
    c.expect(t.one("SELECT count(*) FROM um_events WHERE counter_kind = ?", UM_GPU_FAULT) > 0,
             "GPU page-fault rows")
    um.check_resolution(c)


def check_um_default(c, t):
    check_um_migrates_once(c, t)
    c.equal(t.one("SELECT count(*) FROM mem_advice"), 0, "no advice")


def check_um_default_counters(c, t):
    """By default neither migrations nor page faults are recorded (they slow
    on-demand migration), and the trace says so."""
    c.equal(t.one("SELECT count(*) FROM um_events WHERE counter_kind IN (?, ?, ?, ?)",
                  UM_HTOD, UM_DTOH, UM_GPU_FAULT, UM_CPU_FAULT),
            0, "no migration or page-fault rows")
    counters = t.meta("um_counters") or ""
    c.expect("not asked for: bytes HtoD, bytes DtoH, CPU page fault, GPU page fault group, bytes DtoD"
             in counters, f"meta says what was not asked for: {counters!r}")


def check_um_read_mostly(c, t):
    check_um_migrates_once(c, t)
    c.equal(t.rows("SELECT advice, bytes, alloc_offset FROM mem_advice"),
            [(ADVICE_READ_MOSTLY, UM_SIZE, 0)], "read-mostly advice on the whole array")


def check_um_preferred_cpu(c, t):
    """Preferred location host, accessed by GPU 0: the advice maps the pages into the GPU
    (remote mappings, cause policy) and no run migrates them."""
    um = UmRuns(c, t)
    if c.failures:
        return
    um.report()
    advice = t.rows("SELECT advice, location_type, location_id, bytes, alloc_id, alloc_offset, "
                    "call_correlation_id IS NOT NULL FROM mem_advice ORDER BY ns")
    c.equal(advice, [(ADVICE_PREFERRED, LOCATION_HOST, None, UM_SIZE, um.alloc, 0, 1),
                     (ADVICE_ACCESSED_BY, LOCATION_DEVICE, 0, UM_SIZE, um.alloc, 0, 1)],
            "preferred location host, then accessed by GPU 0, each recorded once")
    mapped = um.of_array("sum(bytes)", UM_REMOTE_MAP, CAUSE_POLICY)
    c.expect(abs(mapped - UM_SIZE) <= UM_SIZE // 10, f"the array is mapped remotely: {mapped} bytes")
    htod = um.per_run("sum(bytes)", UM_HTOD)
    c.expect(all(b < UM_SIZE // 20 for b in htod), f"runs migrate < 5%: {htod}")
    um.check_resolution(c)


def check_um_remote_map(c, t):
    """Preferred location host only: the GPU faults and the driver maps host pages for it."""
    um = UmRuns(c, t, UM_SMALL)
    if c.failures:
        return
    um.report()
    c.expect(um.in_run(0, "count(*)", UM_GPU_FAULT) > 0, "run 1's GPU page faults resolve to the array")
    c.expect(um.in_run(0, "count(*)", UM_REMOTE_MAP) > 0, "run 1 maps the array remotely")
    c.equal(t.one("SELECT group_concat(DISTINCT cause) FROM um_events WHERE counter_kind = ? "
                  "AND alloc_id = ?", UM_REMOTE_MAP, um.alloc), str(CAUSE_POLICY),
            "remote mappings caused by the preferred location")
    htod = um.per_run("sum(bytes)", UM_HTOD)
    c.expect(all(b < UM_SMALL // 20 for b in htod), f"runs migrate < 5%: {htod}")
    um.check_resolution(c)


def check_um_prefetch(c, t):
    """Prefetched in 16 MiB tiles before each run: the copies cover the array, faults vanish."""
    um = UmRuns(c, t)
    if c.failures:
        return
    um.report()
    tiles = UM_SIZE // UM_TILE
    rows = t.rows("SELECT api_start_ns, bytes, src_alloc_id, dst_alloc_id, dst_offset, dst_device, "
                  "is_async FROM memcpys WHERE kind = ? ORDER BY api_start_ns", PREFETCH)
    c.equal(len(rows), tiles * UM_RUNS, "one prefetch row per tile and run, each recorded once")
    c.equal({r[1:4] + r[5:] for r in rows}, {(UM_TILE, um.alloc, um.alloc, 0, 1)},
            "16 MiB async prefetches of the managed array to GPU 0")
    launches = [w[2] for w in um.windows]
    per_run = [sum(r[1] for r in rows if (i == 0 or r[0] > launches[i - 1]) and r[0] < launches[i])
               for i in range(len(launches))]
    c.equal(per_run, [UM_SIZE] * UM_RUNS, "each run prefetches the whole array first")
    c.equal(sorted({r[4] for r in rows}), list(range(0, UM_SIZE, UM_TILE)), "tiles cover the array")
    # UVM names an explicit prefetch's migrations "user"; its cause "prefetch" is
    # its own speculative prefetching.
    prefetched = um.of_array("sum(bytes)", UM_HTOD, CAUSE_USER)
    c.equal(prefetched, UM_SIZE, "the prefetch migrates the array once, reported whole")
    htod = um.per_run("sum(bytes)", UM_HTOD)
    c.expect(all(b < UM_SIZE // 20 for b in htod), f"kernels migrate < 5%: {htod}")
    um.check_resolution(c)


def diagnose_findings(c, trace):
    """Every finding of `apptracer diagnose --format json --all` on the trace
    (the default shows 10: a check must not depend on how many others there are)."""
    result = subprocess.run([APPTRACER, "diagnose", trace.path, "--format", "json", "--all"],
                            capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer diagnose exit status ({result.stderr.strip()})")
    if result.returncode != 0:
        return []
    return json.loads(result.stdout)["findings"]


# Rules whose findings are about correctness: no time cost.
CORRECTNESS_RULES = {"uninitialized_read"}


CHUNKED_CHUNKS = 4


def check_whatif_chunked(c, t):
    """One buffer in, one out, a chunk at a time: each kernel, given both at its
    chunk, reads the chunk its copy filled and nothing else (its launches step
    through the buffers, so its pointers reach one chunk), and no read of a
    chunk not yet copied in is taken for an uninitialized read."""
    copies = t.rows("SELECT kind, bytes, dst_offset FROM memcpys WHERE kind = ? ORDER BY api_start_ns", HTOD)
    c.equal(copies, [(HTOD, MiB, i * MiB) for i in range(CHUNKED_CHUNKS)], "one copy in per chunk")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE kind = ? AND bytes = ?", DTOH, MiB), CHUNKED_CHUNKS,
            "one copy out per chunk")
    c.equal(t.one("SELECT count(*) FROM kernels"), CHUNKED_CHUNKS, "one kernel per chunk")
    result = subprocess.run([APPTRACER, "dvdg", t.path], capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer dvdg ({result.stderr.strip()})")
    read = t.rows("SELECT o.id, s.region_offset, s.bytes FROM dvdg_edges e "
                  "JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_ops o ON o.id = e.op_id "
                  "WHERE o.kind = 'kernel' AND e.kind = 'data' AND s.holds_data = 1 "
                  "GROUP BY o.id, s.id ORDER BY o.id, s.region_offset")
    c.equal([r[1:] for r in read], [(i * MiB, MiB) for i in range(CHUNKED_CHUNKS)],
            "each kernel reads its own chunk, as copied in")
    rules = {f["rule"] for f in diagnose_findings(c, t)}
    c.expect("uninitialized_read" not in rules, f"no uninitialized read (found: {sorted(rules)})")


def check_whatif_chunked_fresh(touched):
    """Copies out into pageable memory say how many of 16 sampled destination
    pages nothing had touched as they began: none in one the program wrote;
    in a new malloc'd array, all but the first (malloc's header is there, and
    the array does not start on a page: each chunk's first page also holds
    the end of the chunk before it, copied out already)."""
    def check(c, t):
        out = t.rows("SELECT dst_sampled_pages, dst_untouched_pages FROM memcpys WHERE kind = ?", DTOH)
        c.equal([sampled for sampled, _ in out], [16] * CHUNKED_CHUNKS, "each copy out sampled 16 pages")
        untouched = [n for _, n in out]
        if touched:
            c.equal(untouched, [0] * CHUNKED_CHUNKS, "all touched")
        else:
            c.expect(all(n >= 15 for n in untouched), f"none touched but the first page: {untouched}")
        c.equal(t.one("SELECT count(*) FROM memcpys WHERE kind = ? AND dst_sampled_pages IS NOT NULL", HTOD), 0,
                "copies in are not probed")
    return check


TILES_MIB = [4, 24, 8]


def check_whatif_tiles(registered, twin):
    """Tiles of uneven sizes: per tile a copy in, two kernels and a copy out, from
    host memory registered in place (or pageable); on one blocking stream, or
    (the twin) copies in, kernels and copies out on three, joined by events;
    the end an event recorded on the legacy default stream, synchronized.
    The streams table says which stream is the legacy one and that the
    program's are blocking, which is what orders them."""
    def check(c, t):
        host = MEM_PINNED if registered else MEM_PAGEABLE
        tiles = [mib * MiB for mib in TILES_MIB]
        copies_in = t.rows("SELECT bytes, src_memory, stream FROM memcpys WHERE kind = ? ORDER BY api_start_ns", HTOD)
        copies_out = t.rows("SELECT bytes, dst_memory, stream FROM memcpys WHERE kind = ? ORDER BY api_start_ns",
                            DTOH)
        c.equal([(b, m) for b, m, _ in copies_in], [(b, host) for b in tiles], "a copy in per tile, in its size")
        c.equal([(b, m) for b, m, _ in copies_out], [(b, host) for b in tiles], "a copy out per tile")
        kernels = t.rows("SELECT stream FROM kernels ORDER BY api_start_ns")
        c.equal(len(kernels), 2 * len(tiles), "two kernels per tile")
        c.equal(t.one("SELECT count(*) FROM allocations WHERE kind = ? AND bytes = ?", REGISTERED, sum(tiles)),
                2 if registered else 0, "input and output registered in place" if registered else "none registered")
        streams = {s for _, _, s in copies_in} | {s for _, _, s in copies_out} | {s for (s,) in kernels}
        c.equal(len(streams), 3 if twin else 1, "three streams" if twin else "one stream")
        if twin:
            c.expect({s for _, _, s in copies_in}.isdisjoint({s for (s,) in kernels}), "copies in on their own stream")
            c.equal(t.one("SELECT count(*) FROM stream_events WHERE kind = ?", EVENT_WAIT), 2 * len(tiles),
                    "each tile's kernels wait for its copy in, its copy out for its kernels")
        # Tiles of uneven sizes, one after another in each device buffer: each
        # kernel reads its own tile (its launches step through the buffer), so
        # --overlap lets a tile's copy in run beside the kernels before it.
        result = subprocess.run([APPTRACER, "dvdg", t.path], capture_output=True, text=True)
        c.equal(result.returncode, 0, f"apptracer dvdg ({result.stderr.strip()})")
        read = t.rows("SELECT o.id, s.region_offset, s.bytes FROM dvdg_edges e "
                      "JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_ops o ON o.id = e.op_id "
                      "WHERE o.kind = 'kernel' AND e.kind = 'data' AND s.holds_data = 1 "
                      "GROUP BY o.id, s.id ORDER BY o.id, s.region_offset")
        starts = [sum(tiles[:i]) for i in range(len(tiles))]
        c.equal([r[1:] for r in read], [tile for tile in zip(starts, tiles) for _ in range(2)],
                "each kernel reads its own tile: the copy's, then the first kernel's")
        kinds = dict(t.rows("SELECT stream, kind FROM streams"))
        c.equal({kinds.get(s) for s in streams}, {STREAM_BLOCKING}, "the program's streams are blocking")
        end = t.rows("SELECT e.stream, e.event_handle FROM stream_events e "
                     "WHERE e.kind = ? ORDER BY e.ns DESC LIMIT 1", EVENT_RECORD)
        c.equal(len(end), 1, "the end is an event record")
        if end:
            legacy, handle = end[0]
            c.equal(kinds.get(legacy), STREAM_LEGACY, "recorded on the legacy default stream")
            c.equal(t.rows("SELECT kind, event_handle FROM syncs WHERE kind = ?", SYNC_EVENT),
                    [(SYNC_EVENT, handle)], "cudaEventSynchronize on it")
    return check


MANAGED_ROUNDS = 3


def check_whatif_managed(prefetch):
    """Each round's kernel reads the managed input the host just wrote: one
    kernel per round and, prefetched, one prefetch of the whole input before
    each (its bytes moved to GPU 0); on demand, none and the kernels migrate
    the pages themselves."""
    def check(c, t):
        alloc = t.one("SELECT id FROM allocations WHERE kind = ?", MANAGED)
        c.equal(t.one("SELECT count(*) FROM kernels"), MANAGED_ROUNDS, "one kernel per round")
        rows = t.rows("SELECT bytes, dst_alloc_id, dst_device FROM memcpys WHERE kind = ?", PREFETCH)
        c.equal(rows, [(8 * MiB, alloc, 0)] * MANAGED_ROUNDS if prefetch else [],
                "a prefetch of the input to GPU 0 per round" if prefetch else "no prefetch")
        moved = t.one("SELECT coalesce(sum(bytes), 0) FROM um_events WHERE counter_kind = ? AND alloc_id = ?",
                      UM_HTOD, alloc)
        c.expect(moved >= MANAGED_ROUNDS * 8 * MiB * 0.9, f"each round moves the input to the GPU ({moved} bytes)")
    return check


HALO_ITERATIONS = 3
HALO_ARGS = ["--iterations", str(HALO_ITERATIONS), "--domain-mib", "8", "--halo-mib", "1", "--work", "50"]

# A machine written by hand for whatif_halo's trace (docs/whatif.md, "a system
# file written by hand"): host paths of both GPUs at 20 GB/s, peer paths at 100.
HALO_SYSTEM = {"format": "apptracer system", "version": 1,
               "machine": {"hostname": "assumed", "gpus": [{"ordinal": g, "name": "GPU", "numa_node": 0}
                                                           for g in (0, 1)]},
               "paths": [{"name": f"{direction}.{memory}.node0.gpu{g}",
                          "model": {"latency_ns": 5000, "bandwidth": [{"bytes": MiB, "gbps": 20}]}}
                         for direction in ("HtoD", "DtoH") for memory in ("pinned", "pageable") for g in (0, 1)]
               + [{"name": f"PtoP.peer.gpu{a}.gpu{1 - a}",
                   "model": {"latency_ns": 5000, "bandwidth": [{"bytes": MiB, "gbps": 100}]}} for a in (0, 1)]}


def check_whatif_halo(c, t):
    """Staged through pinned memory: per iteration, each GPU's halo (1 MiB)
    copied from it into a pinned host buffer and from there into the other
    GPU; GPUs wait for each other with events, so the exchange is whatif's
    period 2, ended by one stream synchronization. `whatif --peer-copies`
    finds every pair of copies a relay and sends it peer to peer."""
    out = t.rows("SELECT src_device, count(*) FROM memcpys WHERE kind = ? AND bytes = ? AND dst_memory = ? "
                 "GROUP BY src_device ORDER BY src_device", DTOH, MiB, MEM_PINNED)
    c.equal(out, [(0, HALO_ITERATIONS), (1, HALO_ITERATIONS)], "each GPU's halo copied to pinned memory per iteration")
    into = t.rows("SELECT dst_device, count(*) FROM memcpys WHERE kind = ? AND bytes = ? AND src_memory = ? "
                  "GROUP BY dst_device ORDER BY dst_device", HTOD, MiB, MEM_PINNED)
    c.equal(into, [(0, HALO_ITERATIONS), (1, HALO_ITERATIONS)], "each GPU's ghost region copied in per iteration")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE kind = ? AND bytes = ?", HTOD, 8 * MiB), 2,
            "each domain copied in once, in set-up")
    c.equal(t.rows("SELECT device, count(*) FROM kernels GROUP BY device ORDER BY device"),
            [(0, HALO_ITERATIONS), (1, HALO_ITERATIONS)], "one kernel per GPU and iteration")
    system = os.path.join(os.path.dirname(t.path), "halo_system.json")
    with open(system, "w") as f:
        json.dump(HALO_SYSTEM, f)
    result = subprocess.run([APPTRACER, "whatif", t.path, "--system", system, "--peer-copies", "--format", "json"],
                            capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer whatif --peer-copies ({result.stderr.strip()})")
    if result.returncode != 0:
        return
    whatif = json.loads(result.stdout)
    relays = 2 * HALO_ITERATIONS
    c.expect(f"--peer-copies: {relays} relay(s) through host memory ({relays} MiB) became peer copies; "
             "their copies to the GPU take no time" in whatif["notes"], f"every pair a relay: {whatif['notes']}")
    by_path = {}
    for transfer in whatif["transfers"]:
        by_path[transfer["whatif_path"]] = by_path.get(transfer["whatif_path"], 0) + transfer["copies"]
    c.equal([by_path.get(f"PtoP.peer.gpu{a}.gpu{1 - a}") for a in (0, 1)], [HALO_ITERATIONS] * 2,
            "each GPU's halos sent peer to peer")
    work = next((p for p in whatif["phases"] if p["name"] == "period 2"), None)
    c.expect(work is not None and work["detail"] == "until cudaStreamSynchronize",
             f"the exchange is period 2, ended by its stream synchronization: {whatif['phases']}")
    if work is not None:
        c.expect(work["predicted_ns"] < work["baseline_ns"],
                 f"peer to peer at 100 GB/s beats the host at 20: {work}")


def check_whatif_halo_peer(c, t):
    """Peer to peer: each GPU copies the other's halo in, one copy per
    iteration, and nothing goes through the host in the exchange."""
    rows = t.rows("SELECT src_device, dst_device, count(*) FROM memcpys WHERE bytes = ? "
                  "GROUP BY src_device, dst_device ORDER BY src_device", MiB)
    c.equal(rows, [(0, 1, HALO_ITERATIONS), (1, 0, HALO_ITERATIONS)], "one peer copy each way per iteration")


def check_diagnosis(rule, bad, more=None):
    """The bad program has a `rule` finding (with a cost, a fix and its rows);
    its fixed twin has none. `more(c, findings)` checks the bad one further."""
    def check(c, t):
        findings = diagnose_findings(c, t)
        mine = [f for f in findings if f["rule"] == rule]
        if not bad:
            c.equal([f["what"] for f in mine], [], f"no {rule} finding in the fixed twin")
            return
        c.expect(mine, f"a {rule} finding (found: {sorted({f['rule'] for f in findings})})")
        for f in mine:
            c.expect(f["fix"] and f["where"]["rows"], f"{rule}: a fix and rows: {f}")
            c.expect(rule in CORRECTNESS_RULES or f["cost_ns"] > 0, f"{rule}: a cost: {f}")
        if more and mine:
            more(c, mine)
    return check


def redundant_both_ways(c, findings):
    whats = " | ".join(f["what"] for f in findings)
    c.expect("back to" in whats, f"data copied back unchanged: {whats}")
    c.expect("already holds" in whats, f"weights uploaded again: {whats}")


def churn_device_and_pinned(c, findings):
    kinds = " | ".join(f["what"] for f in findings)
    c.expect("device allocations" in kinds and "pinned host allocations" in kinds,
             f"device and pinned churn: {kinds}")


def has_saving(c, findings):
    c.expect(all((f["saving_ns"] or 0) > 0 for f in findings), f"a saving: {findings}")


DIAGNOSIS_CASES = {
    "pageable": ("pageable_copy", None), "small_copies": ("small_copies", has_saving),
    "sync_copy": ("sync_copy", None), "sync_memset": ("sync_memset", has_saving),
    "redundant": ("redundant_copy", redundant_both_ways),
    "no_overlap": ("no_copy_compute_overlap", has_saving), "sync_api": ("sync_api", has_saving),
    "gpu_gap": ("gpu_idle_gap", has_saving), "churn": ("allocation_churn", churn_device_and_pinned),
    "launch_bound": ("launch_bound_kernels", has_saving), "uninitialized": ("uninitialized_read", None),
    "never_read": ("written_never_read", None), "never_used": ("allocation_never_used", None),
    "um_faults": ("um_on_demand_migration", None), "um_thrash": ("um_thrashing", None),
    "numa": ("numa_far_host_buffer", None),
}


# --- framework allocators: tensors as values -----------------------------------

def printed_facts(stdout, prefix):
    """The JSON object a Python test app printed after `prefix`."""
    for line in stdout.splitlines():
        if line.startswith(prefix) and line[len(prefix):].lstrip().startswith("{"):
            return json.loads(line[len(prefix):])
    return None


def build_dvdg(c, t):
    """Stores the trace's DVDG in it; a read-write connection to query it."""
    result = subprocess.run([APPTRACER, "dvdg", t.path], capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer dvdg: {result.stderr.strip()}")
    return sqlite3.connect(t.path)


def ancestor_ops(db, value_id):
    """Every op that produced a value `value_id` depends on, transitively."""
    return {op for (op,) in db.execute(
        "WITH RECURSIVE up(id) AS (SELECT ? UNION SELECT e.src_value_id FROM dvdg_edges e "
        "JOIN up ON e.dst_value_id = up.id) "
        "SELECT v.producer_op_id FROM up JOIN dvdg_values v ON v.id = up.id "
        "WHERE v.producer_op_id IS NOT NULL", (value_id,))}


def copy_op(db, where, *args):
    """The dvdg op of the one copy matching `where` (SQL over memcpys m)."""
    rows = db.execute(f"SELECT o.id FROM dvdg_ops o JOIN memcpys m ON m.id = o.source_id "
                      f"WHERE o.kind = 'copy' AND {where}", args).fetchall()
    return rows[0][0] if len(rows) == 1 else None


def written_values(db, op):
    return [v for (v,) in db.execute("SELECT id FROM dvdg_values WHERE producer_op_id = ?", (op,))]


def check_versions_bounded_by_writes(c, t, db, allocator):
    """No tensor's value has more versions than operations that (may) write
    it: a kernel argument pointing into it (not a known read), a copy or
    memset into it, issued while it was allocated. (Whole segments as values
    had a version per write to any tensor in them.)"""
    rows = db.execute(
        "SELECT s.id, (SELECT max(version) FROM dvdg_values v WHERE v.sub_allocation_id = s.id), "
        "(SELECT count(DISTINCT k.id) FROM kernels k JOIN kernel_args a ON a.kernel_id = k.id "
        " WHERE a.raw_value >= s.address AND a.raw_value < s.address + s.bytes AND a.access != ? "
        " AND coalesce(k.api_start_ns, k.gpu_start_ns) >= s.alloc_ns "
        " AND (s.free_ns IS NULL OR coalesce(k.api_start_ns, k.gpu_start_ns) < s.free_ns)) + "
        "(SELECT count(*) FROM memcpys m WHERE m.dst_address < s.address + s.bytes "
        " AND m.dst_address + m.bytes > s.address AND m.api_start_ns >= s.alloc_ns "
        " AND (s.free_ns IS NULL OR m.api_start_ns < s.free_ns)) + "
        "(SELECT count(*) FROM memsets m WHERE m.address < s.address + s.bytes "
        " AND m.address + m.bytes > s.address AND m.api_start_ns >= s.alloc_ns "
        " AND (s.free_ns IS NULL OR m.api_start_ns < s.free_ns)) "
        "FROM sub_allocations s WHERE s.allocator = ?", (ACCESS_R, allocator)).fetchall()
    c.expect(len(rows) > 0, "sub-allocations recorded")
    over = [(block, versions, writes) for block, versions, writes in rows
            if versions is not None and versions > writes]
    c.equal(over, [], "tensors with more versions than writes (block, versions, writes)")


def check_pytorch_train_step(c, t, stdout):
    facts = printed_facts(stdout, "pytorch_train_step: ")
    if facts is None:
        c.expect(False, f"the app printed its addresses: {stdout!r}")
        return
    c.expect((t.meta("sub_allocations.pytorch") or "").startswith("attached"),
             f"the tracker attached: {t.meta('sub_allocations.pytorch')!r}")
    blocks = {}
    for name, address in facts["params"].items():
        rows = t.rows("SELECT id, bytes, parent_alloc_id IS NOT NULL, device FROM sub_allocations "
                      "WHERE address = ? AND allocator = ?", address, PYTORCH_CACHING)
        c.equal([r[1:] for r in rows], [(facts["param_bytes"][name], 1, 0)],
                f"parameter {name}: one block of its bytes in a CUDA allocation")
        blocks[name] = rows[0][0] if rows else None
    c.equal(len(set(blocks.values())), len(blocks), "each parameter its own block")
    db = build_dvdg(c, t)
    try:
        for name, block in blocks.items():
            values = db.execute("SELECT count(*) FROM dvdg_values WHERE sub_allocation_id = ?",
                                (block,)).fetchone()[0]
            c.expect(values >= 2, f"parameter {name} has values of its own: {values}")
        # The optimizer's update of a weight: its last version, from the
        # previous one and the gradient.
        weight = "0.weight"
        last = db.execute("SELECT id, version, producer_op_id FROM dvdg_values "
                          "WHERE sub_allocation_id = ? ORDER BY version DESC LIMIT 1",
                          (blocks.get(weight),)).fetchone()
        if last is None:
            c.expect(False, f"{weight} has no value")
        else:
            value, version, op = last
            sources = db.execute(
                "SELECT v.sub_allocation_id, v.version, s.address, e.kind FROM dvdg_edges e "
                "JOIN dvdg_values v ON v.id = e.src_value_id "
                "LEFT JOIN sub_allocations s ON s.id = v.sub_allocation_id "
                "WHERE e.dst_value_id = ?", (value,)).fetchall()
            c.equal(db.execute("SELECT kind FROM dvdg_ops WHERE id = ?", (op,)).fetchone(), ("kernel",),
                    f"{weight}'s last version is a kernel's (the optimizer step)")
            c.expect(any(b == blocks[weight] and v == version - 1 for b, v, _, _ in sources),
                     f"{weight} v{version} comes from v{version - 1}: {sources}")
            c.expect(any(a == facts["grads"][weight] for _, _, a, _ in sources),
                     f"{weight} v{version} comes from its gradient's block: {sources}")
        # The loss on the host depends on the batch's host-to-device copy.
        batch = copy_op(db, "m.kind = ? AND m.dst_address = ? AND m.bytes = ?", HTOD, facts["input"],
                        facts["input_bytes"])
        loss = copy_op(db, "m.kind = ? AND m.src_address = ?", DTOH, facts["loss"])
        c.expect(batch is not None and loss is not None, f"the batch copy {batch} and loss copy {loss}")
        if batch is not None and loss is not None:
            written = written_values(db, loss)
            c.equal(len(written), 1, "the loss copy writes one value")
            c.expect(written and batch in ancestor_ops(db, written[0]),
                     "the loss on the host depends on the batch's host-to-device copy")
        check_versions_bounded_by_writes(c, t, db, PYTORCH_CACHING)
    finally:
        db.close()


def check_cupy_pool(c, t, stdout):
    facts = printed_facts(stdout, "cupy_pool: ")
    if facts is None:
        c.expect(False, f"the app printed its addresses: {stdout!r}")
        return
    c.expect(t.meta("sub_allocations.cupy") is not None, "the CuPy hook was entered")
    rows = {name: t.rows("SELECT id, bytes, block_bytes, alloc_ns, free_ns, alloc_tid, "
                         "parent_alloc_id IS NOT NULL FROM sub_allocations "
                         "WHERE address = ? AND allocator = ? ORDER BY alloc_ns", address, CUPY_POOL)
            for name, address in facts.items()}
    c.equal(facts["a"], facts["c"], "c reuses a's block")
    a_then_c = rows["a"]
    c.equal(len(a_then_c), 2, "a's block twice: a, then c")
    if len(a_then_c) == 2:
        (a_id, a_bytes, a_block, _, a_free, a_tid, a_parent), (c_id, _, _, c_alloc, _, _, _) = a_then_c
        c.equal((a_bytes, a_block, a_parent), (4 * MiB, 4 * MiB, 1), "a: 4 MiB in a CUDA allocation")
        c.expect(a_free is not None and a_free <= c_alloc, "a is back in the pool before c takes it")
        d = rows["d"]
        c.equal([(r[1], r[2]) for r in d], [(4000, 4096)], "d: 4000 bytes asked, a 4096-byte block")
        c.expect(d and d[0][5] != a_tid, "d was allocated on its own thread, and seen there")
        db = build_dvdg(c, t)
        try:
            from_a = db.execute(
                "SELECT count(*) FROM dvdg_edges e JOIN dvdg_values s ON s.id = e.src_value_id "
                "JOIN dvdg_values d ON d.id = e.dst_value_id "
                "WHERE s.sub_allocation_id = ? AND d.sub_allocation_id = ?", (a_id, c_id)).fetchone()[0]
            c.equal(from_a, 0, "c, in a's old block, depends on nothing of a")
            b_id = rows["b"][0][0] if rows["b"] else None
            c.expect(db.execute("SELECT count(*) FROM dvdg_values WHERE sub_allocation_id = ?",
                                (b_id,)).fetchone()[0] >= 2, "b has values of its own")
            check_versions_bounded_by_writes(c, t, db, CUPY_POOL)
        finally:
            db.close()


def check_jax_arrays(c, t, stdout):
    facts = printed_facts(stdout, "jax_arrays: ")
    if facts is None:
        c.expect(False, f"the app printed its addresses: {stdout!r}")
        return
    c.equal(t.one("SELECT count(*) FROM sub_allocations"), 0, "no sub-allocations: XLA's platform allocator")
    allocations = {}
    for name, address in facts.items():
        # The latest at that address: an earlier buffer may have been freed there.
        # XLA's platform allocator maps each buffer through the VMM API
        # (cuMemCreate + cuMemMap): the mapping is what the pointer hits.
        allocations[name] = t.one("SELECT id FROM allocations WHERE address = ? AND kind IN (?, ?) "
                                  "ORDER BY alloc_ns DESC LIMIT 1", address, DEVICE, VMM_MAPPING)
        c.expect(allocations[name] is not None, f"array {name} is a CUDA allocation of its own")
    c.equal(len(set(allocations.values())), 3, "three arrays, three allocations")
    db = build_dvdg(c, t)
    try:
        z_copy = copy_op(db, "m.kind = ? AND m.src_alloc_id = ?", DTOH, allocations["z"])
        c.expect(z_copy is not None, "z's copy to the host")
        if z_copy is not None:
            written = written_values(db, z_copy)
            ancestors = ancestor_ops(db, written[0]) if written else set()
            producers = {name: {op for (op,) in db.execute(
                "SELECT producer_op_id FROM dvdg_values WHERE alloc_id = ? AND version > 0", (alloc,))}
                for name, alloc in allocations.items()}
            for name in ("x", "y", "z"):
                c.expect(producers[name] & ancestors, f"z on the host depends on {name}'s own value")
    finally:
        db.close()


class Case:
    """A test: which app, its arguments, how the tracer is injected, what to check.

    route: "record" (apptracer record), "injection" (CUDA_INJECTION64_PATH),
    "cupti_in_use" (another CUPTI subscriber preloaded first, then injection).
    """

    def __init__(self, check, app=None, args=(), route="record", common=True, timing_lines=None,
                 record_args=()):
        self.check, self.app, self.args, self.route, self.common = check, app, list(args), route, common
        self.record_args = list(record_args)  # apptracer record's own options
        self.timing_lines = timing_lines  # stdout lines starting so differ from run to run


def comparable_stdout(case, stdout):
    if not case.timing_lines:
        return stdout
    return "".join(line for line in stdout.splitlines(keepends=True)
                   if not line.startswith(case.timing_lines))


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
    "peer_store": Case(check_peer_store(False)),
    "peer_store_exact": Case(check_peer_store(True), "peer_store", record_args=["--exact"]),
    "forking": Case(check_forking_ending("complete")),
    "forking_term": Case(check_forking_ending("incomplete", "signal 15"), "forking", ["--term"]),
    "exit_from_thread": Case(check_exit_status("complete"), "exit_paths", ["thread-exit"]),
    "underscore_exit": Case(check_exit_status("complete"), "exit_paths", ["_exit"]),
    "abort_signal": Case(check_exit_status("incomplete", "signal 6"), "exit_paths", ["abort"],
                         common=False),
    "sigkill": Case(check_exit_status("incomplete"), "exit_paths", ["kill"], common=False),
    "term_signal": Case(check_exit_status("incomplete", "signal 15"), "exit_paths", ["term"],
                        common=False),
    "term_before_context": Case(check_signal_before_context, "exit_paths", ["term-before-context"],
                                common=False, record_args=["--host-allocations=all"]),
    "device_reset": Case(check_device_reset, "exit_paths", ["device-reset"], common=False),
    "injection": Case(check_vector_add, "vector_add", route="injection"),
    "cupti_in_use": Case(None, "vector_add", route="cupti_in_use"),
    "exec_self": Case(check_exec_self),
    "kernel_args": Case(check_kernel_args),
    "exact_patterns": Case(check_exact_patterns, record_args=["--exact"]),
    "exact_tma": Case(check_exact_tma, record_args=["--exact"]),
    "exact_pytorch_conv_gemm": Case(check_exact_pytorch_conv_gemm, "pytorch_conv_gemm.py",
                                    timing_lines="pytorch_conv_gemm: ", record_args=["--exact"]),
    "graphs_explicit": Case(check_graphs_explicit, "graphs", ["explicit"]),
    "graphs_capture": Case(check_graphs_capture, "graphs", ["capture"]),
    "graphs_update": Case(check_graphs_update, "graphs", ["update"]),
    "host_copies": Case(check_host_copies),
    "whatif_chunked": Case(check_whatif_chunked, "whatif_chunked",
                           ["--chunks", str(CHUNKED_CHUNKS), "--chunk-mib", "1", "--streams", "2",
                            "--work", "50"], timing_lines="work_ms"),
    "whatif_chunked_fresh": Case(check_whatif_chunked_fresh(False), "whatif_chunked",
                                 ["--chunks", str(CHUNKED_CHUNKS), "--chunk-mib", "1", "--work", "50",
                                  "--pageable", "1", "--touch-out", "0"], timing_lines="work_ms"),
    "whatif_chunked_touched": Case(check_whatif_chunked_fresh(True), "whatif_chunked",
                                   ["--chunks", str(CHUNKED_CHUNKS), "--chunk-mib", "1", "--work", "50",
                                    "--pageable", "1"], timing_lines="work_ms"),
    "whatif_tiles": Case(check_whatif_tiles(True, False), "whatif_tiles",
                         ["--tiles", str(len(TILES_MIB)), "--work", "20"], timing_lines="work_ms"),
    "whatif_tiles_pageable": Case(check_whatif_tiles(False, False), "whatif_tiles",
                                  ["--tiles", str(len(TILES_MIB)), "--work", "20", "--registered", "0"],
                                  timing_lines="work_ms"),
    "whatif_tiles_twin": Case(check_whatif_tiles(True, True), "whatif_tiles",
                              ["--tiles", str(len(TILES_MIB)), "--work", "20", "--twin", "1"],
                              timing_lines="work_ms"),
    "whatif_managed": Case(check_whatif_managed(False), "whatif_managed",
                           ["--rounds", str(MANAGED_ROUNDS), "--mib", "8", "--work", "5"], timing_lines="work_ms",
                           record_args=UM_ALL),
    "whatif_managed_prefetch": Case(check_whatif_managed(True), "whatif_managed",
                                    ["--rounds", str(MANAGED_ROUNDS), "--mib", "8", "--work", "5", "--prefetch", "1"],
                                    timing_lines="work_ms", record_args=UM_ALL),
    "whatif_halo": Case(check_whatif_halo, "whatif_halo", HALO_ARGS, timing_lines="work_ms"),
    "whatif_halo_peer": Case(check_whatif_halo_peer, "whatif_halo", HALO_ARGS + ["--peer", "1"],
                             timing_lines="work_ms"),
    # Migrations and page faults are recorded only when asked for (--unified-memory).
    "um_default": Case(check_um_default, "um_bandwidth", um_args(), timing_lines=UM_TIMING,
                       record_args=UM_ALL),
    "um_default_counters": Case(check_um_default_counters, "um_bandwidth", um_args(),
                                timing_lines=UM_TIMING),
    "um_preferred_cpu": Case(check_um_preferred_cpu, "um_bandwidth", um_args(UM_SIZE, "--advice", "both"),
                             timing_lines=UM_TIMING, record_args=UM_ALL),
    "um_remote_map": Case(check_um_remote_map, "um_bandwidth",
                          um_args(UM_SMALL, "--advice", "preferred-cpu"), timing_lines=UM_TIMING,
                          record_args=UM_ALL),
    "um_prefetch": Case(check_um_prefetch, "um_bandwidth", um_args(UM_SIZE, "--prefetch"),
                        timing_lines=UM_TIMING, record_args=UM_ALL),
    "um_read_mostly": Case(check_um_read_mostly, "um_bandwidth", um_args(UM_SIZE, "--advice", "read-mostly"),
                           timing_lines=UM_TIMING, record_args=UM_ALL),
    # Python programs (exit 77 without their framework or a GPU).
    "pytorch_train_step": Case(check_pytorch_train_step, "pytorch_train_step.py",
                               timing_lines="pytorch_train_step: "),
    "cupy_pool": Case(check_cupy_pool, "cupy_pool.py", timing_lines="cupy_pool: "),
    "jax_arrays": Case(check_jax_arrays, "jax_arrays.py", timing_lines="jax_arrays: ",
                       record_args=["--framework-allocators", "per-buffer"]),
}
# The unified-memory rules read migrations, which are recorded only when asked for.
DIAGNOSIS_RECORD_ARGS = {"um_faults": UM_ALL, "um_thrash": UM_ALL}
for _scenario, (_rule, _more) in DIAGNOSIS_CASES.items():
    for _variant in ("bad", "fixed"):
        CASES[f"diag_{_scenario}_{_variant}"] = Case(
            check_diagnosis(_rule, _variant == "bad", _more), "diagnose_cases", [_scenario, _variant],
            record_args=DIAGNOSIS_RECORD_ARGS.get(_scenario, ()))
# The scenarios that launch kernels, again under --exact: the same finding
# for the bad program and none for the fixed one, which reads nothing
# uninitialized either (what the sanitizer saw only sharpens the graph).
DIAGNOSIS_KERNEL_SCENARIOS = ["redundant", "no_overlap", "sync_api", "gpu_gap", "churn", "launch_bound",
                              "uninitialized", "never_read", "never_used", "um_faults", "um_thrash"]


def check_diagnosis_exact(rule, bad, more):
    plain = check_diagnosis(rule, bad, more)

    def check(c, t):
        c.equal(t.meta("exact"), "on", "meta.exact")
        plain(c, t)
        if not bad:
            c.equal(uninitialized_reads(dvdg_json(c, t)), [], "the fixed twin reads nothing uninitialized")
    return check


for _scenario in DIAGNOSIS_KERNEL_SCENARIOS:
    _rule, _more = DIAGNOSIS_CASES[_scenario]
    for _variant in ("bad", "fixed"):
        CASES[f"diag_{_scenario}_{_variant}_exact"] = Case(
            check_diagnosis_exact(_rule, _variant == "bad", _more), "diagnose_cases", [_scenario, _variant],
            record_args=list(DIAGNOSIS_RECORD_ARGS.get(_scenario, ())) + ["--exact"])

# Cases whose check also reads the program's standard output.
NEEDS_STDOUT = {"kernel_args", "pytorch_train_step", "cupy_pool", "jax_arrays"}

# Cases whose check takes every trace the run wrote, not exactly one.
MULTI_TRACE = {"forking", "forking_term", "exec_self"}


def traced_command(case, args, program, output):
    env = dict(os.environ)
    if case.route == "record":
        return [args.apptracer, "record", *case.record_args, "-o", output, "--", program] + case.args, env
    env["APPTRACER_OUTPUT"] = output
    env["CUDA_INJECTION64_PATH"] = args.library
    if case.route == "cupti_in_use":
        env["LD_PRELOAD"] = args.other_subscriber
    return [program] + case.args, env


APPTRACER = None  # set by main
ARGS = None  # the command line, set by main


def main():
    global APPTRACER, ARGS
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
    ARGS = args

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
