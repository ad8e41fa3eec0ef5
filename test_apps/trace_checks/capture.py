"""Capture basics: the apps with one CUDA behaviour each (allocations of
every kind, copies and the host blocks behind them, memsets, streams and
events, threads, a failing call, peer copies and stores), and every way a
process ends (fork, exit from a thread, _exit, signals, exec, a device
reset). Every analysis rests on these rows, so they are checked exactly:
counts, bytes, kinds and the allocations pointers resolve to; and however
the process ends, its trace holds what it did until then and says how it
ended.
"""
import csv
import subprocess

from . import base
from .analyses import dvdg_edges
from .base import E, Case, MiB, common_checks


def host_vectors(c, t):
    """The three std::vector buffers: host blocks that became rows when copied (when the
    allocator was interposed: not through CUDA_INJECTION64_PATH alone)."""
    if t.meta("host_allocations").startswith("unavailable"):
        c.equal(t.one("SELECT count(*) FROM allocations WHERE kind = ?", E.PAGEABLE_HOST), 0,
                "allocator not interposed: no host blocks")
        return [None] * 3
    host = t.rows("SELECT id, bytes, alloc_tid IS NOT NULL, free_ns IS NOT NULL FROM allocations "
                  "WHERE kind = ? ORDER BY alloc_ns", E.PAGEABLE_HOST)
    c.equal([r[1:] for r in host], [(4 * MiB, 1, 1)] * 3,
            "a_h, b_h, s_h: three 4 MiB pageable host blocks, thread known, freed")
    return [r[0] for r in host] if len(host) == 3 else [None] * 3


def check_vector_add(c, t):
    device = t.rows("SELECT id, bytes FROM allocations WHERE kind = ? ORDER BY id", E.DEVICE)
    c.equal([b for _, b in device], [4 * MiB] * 3, "three 4 MiB device allocations")
    c.equal(t.one("SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0, "all freed")
    ids = [i for i, _ in device]
    a_h, b_h, s_h = host_vectors(c, t)
    copies = t.rows("SELECT kind, bytes, src_alloc_id, dst_alloc_id, src_memory, dst_memory "
                    "FROM memcpys ORDER BY api_start_ns")
    c.equal(copies, [(E.HTOD, 4 * MiB, a_h, ids[0], E.MEM_PAGEABLE, E.MEM_DEVICE),
                     (E.HTOD, 4 * MiB, b_h, ids[1], E.MEM_PAGEABLE, E.MEM_DEVICE),
                     (E.DTOH, 4 * MiB, ids[2], s_h, E.MEM_DEVICE, E.MEM_PAGEABLE)], "copies")
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
                   "WHERE s.text LIKE 'cuLaunchKernel%' AND r.domain = ?", E.DOMAIN_RUNTIME)
    c.equal(served, 1, "cudaLaunchKernel's row names the cuLaunchKernel it made")
    c.equal(t.one("SELECT count(*) FROM api_calls a JOIN kernels k ON k.call_correlation_id = "
                  "a.correlation_id WHERE a.stream = k.stream"), 1,
            "cudaLaunchKernel's row names the stream its kernel ran on")
    c.equal(t.one("SELECT count(*) FROM api_calls WHERE parent_correlation_id IS NOT NULL"), 0,
            "no driver call of its own inside a runtime call")
    joined = t.one("SELECT count(*) FROM kernels k JOIN api_calls a "
                   "ON a.correlation_id = k.call_correlation_id AND a.domain = ?", E.DOMAIN_RUNTIME)
    c.equal(joined, 1, "kernel joins its runtime call by correlation id")
    a_d, b_d, s_d = ids
    # Fig. 6.1: a_h -> a_d', b_h -> b_d', a_d' -> s_d', b_d' -> s_d', s_d' -> s_h'.
    c.equal(dvdg_edges(t), [(a_h, 0, a_d, 1, "copy"), (b_h, 0, b_d, 1, "copy"),
                            (a_d, 1, s_d, 1, "kernel"), (b_d, 1, s_d, 1, "kernel"),
                            (s_d, 1, s_h, 1, "copy")], "the DVDG of Fig. 6.1")


def check_driver_vector_add(c, t):
    c.equal(t.rows("SELECT bytes FROM allocations WHERE kind = ?", E.DEVICE), [(4 * MiB,)] * 3,
            "three cuMemAlloc allocations")
    ids = [r[0] for r in t.rows("SELECT id FROM allocations WHERE kind = ? ORDER BY id", E.DEVICE)]
    a_h, b_h, s_h = host_vectors(c, t)
    copies = t.rows("SELECT kind, bytes, src_alloc_id, dst_alloc_id FROM memcpys ORDER BY api_start_ns")
    c.equal(copies, [(E.HTOD, 4 * MiB, a_h, ids[0]), (E.HTOD, 4 * MiB, b_h, ids[1]),
                     (E.DTOH, 4 * MiB, ids[2], s_h)], "driver copies")
    c.equal(t.rows("SELECT s.text, launch_kind FROM kernels k JOIN strings s ON s.id = k.name_id"),
            [("vector_add", 1)], "extern C kernel via cuLaunchKernel")
    c.equal(t.one("SELECT count(*) FROM api_calls WHERE domain = ?", E.DOMAIN_RUNTIME), 0,
            "no runtime calls")
    # extern "C": no signature, so the kernel is assumed to read and write all three.
    a_d, b_d, s_d = ids
    kernel_edges = [e for e in dvdg_edges(t) if e[4] == "kernel"]
    c.equal(kernel_edges, [(a_d, 1, a_d, 2, "kernel"), (a_d, 1, b_d, 2, "kernel"),
                           (a_d, 1, s_d, 1, "kernel"), (b_d, 1, a_d, 2, "kernel"),
                           (b_d, 1, b_d, 2, "kernel"), (b_d, 1, s_d, 1, "kernel")],
            "DVDG kernel edges of an extern C kernel (every pointer read-write)")


def check_streams_events(c, t):
    pinned = t.one("SELECT id FROM allocations WHERE kind = ?", E.PINNED_HOST)
    device = t.one("SELECT id FROM allocations WHERE kind = ?", E.DEVICE)
    c.expect(pinned is not None and device is not None, "pinned and device allocations")
    kernel_stream = t.one("SELECT stream FROM kernels")
    copy = t.rows("SELECT kind, src_alloc_id, dst_alloc_id, dst_memory, is_async, stream FROM memcpys")
    c.equal(len(copy), 1, "one copy")
    if copy:
        kind, src, dst, dst_memory, is_async, copy_stream = copy[0]
        c.equal((kind, src, dst, dst_memory, is_async), (E.DTOH, device, pinned, E.MEM_PINNED, 1),
                "async DtoH into pinned memory")
        c.expect(copy_stream != kernel_stream, "kernel and copy on different streams")
        events = t.rows("SELECT kind, stream, event_handle FROM stream_events ORDER BY ns")
        c.equal([(k, s) for k, s, _ in events], [(E.EVENT_RECORD, kernel_stream), (E.EVENT_WAIT, copy_stream)],
                "event recorded on the producer, waited on by the consumer")
        c.expect(len({e for _, _, e in events}) == 1, "one event handle")
        c.equal(t.rows("SELECT kind, stream FROM syncs"), [(E.SYNC_STREAM, copy_stream)],
                "stream synchronize on the consumer")
        c.expect(t.one("SELECT end_ns - start_ns FROM syncs") >= 0, "sync has a duration")


def check_host_alloc_kinds(c, t):
    kinds = dict(t.rows("SELECT kind, count(*) FROM allocations WHERE kind != ? GROUP BY kind",
                        E.PAGEABLE_HOST))
    c.equal(kinds, {E.DEVICE: 2, E.PINNED_HOST: 2, E.MAPPED: 1, E.WRITE_COMBINED: 1, E.REGISTERED: 1, E.MANAGED: 1},
            "allocation kinds")
    c.expect(t.one("SELECT count(*) FROM allocations WHERE kind IN (?, ?, ?, ?) AND numa_node IS NULL",
                   E.PINNED_HOST, E.MAPPED, E.WRITE_COMBINED, E.REGISTERED) == 0,
             "page-locked allocations have a NUMA node")
    flags = dict(t.rows("SELECT kind, flags FROM allocations WHERE kind IN (?, ?)", E.MAPPED, E.WRITE_COMBINED))
    c.equal(flags, {E.MAPPED: 2, E.WRITE_COMBINED: 4}, "cudaHostAlloc flags kept")
    sources = t.rows("SELECT a.kind, m.src_memory FROM memcpys m LEFT JOIN allocations a "
                     "ON a.id = m.src_alloc_id WHERE m.kind = ? AND m.width IS NULL "
                     "ORDER BY m.api_start_ns", E.HTOD)
    c.equal(sources, [(E.PINNED_HOST, E.MEM_PINNED), (E.PINNED_HOST, E.MEM_PINNED), (E.MAPPED, E.MEM_PINNED),
                      (E.WRITE_COMBINED, E.MEM_PINNED), (E.REGISTERED, E.MEM_PINNED),
                      (E.PAGEABLE_HOST, E.MEM_PAGEABLE)],
            "each host kind is the source of one copy")
    managed = t.one("SELECT id FROM allocations WHERE kind = ?", E.MANAGED)
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE dst_alloc_id = ?", managed), 1,
            "copy into managed memory resolved")
    pitched = t.rows("SELECT m.width, m.height, m.bytes, a.pitch IS NOT NULL FROM memcpys m "
                     "JOIN allocations a ON a.id = m.dst_alloc_id WHERE m.width IS NOT NULL")
    c.equal(pitched, [(1000, 64, 64000, 1)], "2D copy into a pitched allocation")


def check_memsets(c, t):
    device = t.one("SELECT id FROM allocations WHERE kind = ? AND bytes = ?", E.DEVICE, MiB)
    rows = t.rows("SELECT bytes, value, alloc_id = ?, alloc_offset, is_async FROM memsets "
                  "ORDER BY api_start_ns", device)
    c.equal(rows[:3], [(MiB, 0, 1, 0, 0), (8192, 0xab, 1, 4096, 0), (MiB // 2, 1, 1, 0, 1)],
            "linear memsets, interior pointer resolved")
    c.equal(len(rows), 4, "four memsets")
    if len(rows) == 4:
        c.equal(rows[3][0:2], (256 * 32, 3), "2D memset bytes and value")


def check_malloc_async(c, t):
    pools = t.rows("SELECT bytes, free_ns IS NOT NULL FROM allocations WHERE kind = ?", E.POOL)
    c.equal(pools, [(MiB, 1), (MiB, 1)], "two stream-ordered allocations, both freed")
    c.equal(t.one("SELECT count(*) FROM kernels"), 2, "two kernels")


def check_multithreaded(c, t):
    c.equal(t.one("SELECT count(*) FROM kernels"), 800, "8 x 100 launches")
    c.equal(t.one("SELECT count(DISTINCT stream) FROM kernels"), 8, "eight streams")
    c.equal(t.one("SELECT count(DISTINCT tid) FROM api_calls WHERE domain = ?", E.DOMAIN_RUNTIME), 8,
            "eight launching threads")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE kind = ?", E.DTOH), 8, "eight copies back")
    c.equal(t.one("SELECT count(*) FROM memsets"), 8, "eight memsets")
    c.equal(t.one("SELECT count(*) FROM allocations WHERE kind = ? AND free_ns IS NOT NULL", E.DEVICE), 8,
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
                     E.DEVICE, 16 * MiB)
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
        report = subprocess.run([base.APPTRACER, "stats", "--report", "kernel_traffic", "--format", "csv", t.path],
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
                [(E.DEVICE, MiB), (E.PAGEABLE_HOST, MiB)],
                "the allocations made before the end (device buffer, host vector copied from)")
        c.equal(t.rows("SELECT kind, bytes FROM memcpys"), [(E.DTOH, MiB)], "the copy made before the end")
        c.equal(t.one("SELECT count(*) FROM memsets"), 1, "the memset made before the end")
    return check


def check_signal_before_context(c, t):
    """SIGTERM before the first CUDA context: the trace still holds what came before it."""
    c.equal(t.meta("status"), "incomplete", "meta.status")
    c.equal(t.meta("end_reason"), "signal 15", "meta.end_reason")
    c.equal(t.rows("SELECT kind, bytes FROM allocations WHERE bytes = ?", MiB), [(E.PAGEABLE_HOST, MiB)],
            "the host block allocated before the signal")
    c.equal(t.one("SELECT count(*) FROM allocations WHERE kind = ?", E.DEVICE), 0, "no device memory yet")


def check_device_reset(c, t):
    common_checks(c, t)
    c.equal(t.rows("SELECT bytes FROM allocations WHERE kind = ?", E.DEVICE), [(MiB,), (MiB,)],
            "work before and after the reset")
    c.equal(t.one("SELECT count(*) FROM memcpys"), 2, "two copies")
    c.equal(t.api_count("cudaDeviceReset"), 1, "cudaDeviceReset recorded")


def check_exec_self(c, traces):
    c.equal(len(traces), 2, "one trace per image")
    c.equal(len({t.meta("pid") for t in traces}), 1, "same pid")
    c.equal(sorted(t.meta("end_reason") or "" for t in traces), ["", "exec"],
            "the first image's trace ends at exec")
    for t in traces:
        common_checks(c, t)
        c.equal(t.rows("SELECT kind, bytes FROM memcpys"), [(E.HTOD, MiB)], f"{t.path} copy")


def check_host_copies(c, t):
    """Each copy's host endpoint resolves to the block it lies in, at the right offset."""
    def block(size):
        rows = t.rows("SELECT id, flags, numa_node, free_ns IS NOT NULL FROM allocations "
                      "WHERE kind = ? AND bytes = ?", E.PAGEABLE_HOST, size)
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
    registered = t.one("SELECT id FROM allocations WHERE kind = ?", E.REGISTERED)
    copies = t.rows("SELECT kind, bytes, src_alloc_id, src_offset, src_memory, dst_alloc_id, "
                    "dst_offset FROM memcpys ORDER BY api_start_ns")
    device = t.one("SELECT id FROM allocations WHERE kind = ?", E.DEVICE)
    c.equal(copies, [(E.HTOD, MiB, malloc_id, 0, E.MEM_PAGEABLE, device, 0),
                     (E.HTOD, MiB - 4096, new_id, 4096, E.MEM_PAGEABLE, device, MiB),
                     (E.HTOD, MiB, mmap_id, 0, E.MEM_PAGEABLE, device, 2 * MiB),
                     (E.HTOD, 4096, None, None, E.MEM_PAGEABLE, device, 3 * MiB),
                     (E.DTOH, 1000, device, MiB, E.MEM_DEVICE, malloc_id, 8192),
                     (E.HTOD, MiB, registered, 0, E.MEM_PINNED, device, 0)],
            "malloc, new[] interior, mmap, stack (no allocation), DtoH into the malloc'd block, "
            "registered")
    c.expect(registered_block is not None, "registering a malloc'd block makes it a row too")
    nodes = t.rows("SELECT src_numa_node IS NOT NULL, dst_numa_node IS NOT NULL FROM memcpys "
                   "ORDER BY api_start_ns")
    c.equal(nodes, [(1, 0), (1, 0), (1, 0), (1, 0), (0, 1), (1, 0)],
            "every host endpoint has a NUMA node (the registered one from its allocation)")
    c.expect(t.one("SELECT count(*) FROM devices WHERE numa_node IS NOT NULL") >= 1,
             "the GPU's NUMA node")


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
    "host_copies": Case(check_host_copies),
}
