"""What-if programs (whatif_chunked, whatif_tiles, whatif_managed,
whatif_halo): the work `apptracer whatif` rearranges. Their traces must hold
what its predictions rest on: each kernel reading only its own chunk or
tile (so a later copy in may run beside it), streams' kinds and the events
ordering them, the untouched pages of a copy's destination, prefetches and
migrations of managed memory; and whatif --peer-copies must turn the halo
exchange's relays through the host into peer copies that beat it.
"""
import json
import os
import subprocess

from . import base
from .analyses import diagnose_findings
from .base import E, UM_ALL, Case, MiB


CHUNKED_CHUNKS = 4


def kernel_data_reads(c, t):
    """The graph `apptracer dvdg` stores: each kernel's reads of data, as
    (op id, offset in its region, bytes), by kernel and offset."""
    result = subprocess.run([base.APPTRACER, "dvdg", t.path], capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer dvdg ({result.stderr.strip()})")
    return t.rows("SELECT o.id, s.region_offset, s.bytes FROM dvdg_edges e "
                  "JOIN dvdg_values s ON s.id = e.src_value_id JOIN dvdg_ops o ON o.id = e.op_id "
                  "WHERE o.kind = 'kernel' AND e.kind = 'data' AND s.holds_data = 1 "
                  "GROUP BY o.id, s.id ORDER BY o.id, s.region_offset")


def check_whatif_chunked(c, t):
    """One buffer in, one out, a chunk at a time: each kernel, given both at its
    chunk, reads the chunk its copy filled and nothing else (its launches step
    through the buffers, so its pointers reach one chunk), and no read of a
    chunk not yet copied in is taken for an uninitialized read."""
    copies = t.rows("SELECT kind, bytes, dst_offset FROM memcpys WHERE kind = ? ORDER BY api_start_ns", E.HTOD)
    c.equal(copies, [(E.HTOD, MiB, i * MiB) for i in range(CHUNKED_CHUNKS)], "one copy in per chunk")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE kind = ? AND bytes = ?", E.DTOH, MiB), CHUNKED_CHUNKS,
            "one copy out per chunk")
    c.equal(t.one("SELECT count(*) FROM kernels"), CHUNKED_CHUNKS, "one kernel per chunk")
    read = kernel_data_reads(c, t)
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
        out = t.rows("SELECT dst_sampled_pages, dst_untouched_pages FROM memcpys WHERE kind = ?", E.DTOH)
        c.equal([sampled for sampled, _ in out], [16] * CHUNKED_CHUNKS, "each copy out sampled 16 pages")
        untouched = [n for _, n in out]
        if touched:
            c.equal(untouched, [0] * CHUNKED_CHUNKS, "all touched")
        else:
            c.expect(all(n >= 15 for n in untouched), f"none touched but the first page: {untouched}")
        c.equal(t.one("SELECT count(*) FROM memcpys WHERE kind = ? AND dst_sampled_pages IS NOT NULL", E.HTOD), 0,
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
        host = E.MEM_PINNED if registered else E.MEM_PAGEABLE
        tiles = [mib * MiB for mib in TILES_MIB]
        copies_in = t.rows("SELECT bytes, src_memory, stream FROM memcpys WHERE kind = ? ORDER BY api_start_ns", E.HTOD)
        copies_out = t.rows("SELECT bytes, dst_memory, stream FROM memcpys WHERE kind = ? ORDER BY api_start_ns",
                            E.DTOH)
        c.equal([(b, m) for b, m, _ in copies_in], [(b, host) for b in tiles], "a copy in per tile, in its size")
        c.equal([(b, m) for b, m, _ in copies_out], [(b, host) for b in tiles], "a copy out per tile")
        kernels = t.rows("SELECT stream FROM kernels ORDER BY api_start_ns")
        c.equal(len(kernels), 2 * len(tiles), "two kernels per tile")
        c.equal(t.one("SELECT count(*) FROM allocations WHERE kind = ? AND bytes = ?", E.REGISTERED, sum(tiles)),
                2 if registered else 0, "input and output registered in place" if registered else "none registered")
        streams = {s for _, _, s in copies_in} | {s for _, _, s in copies_out} | {s for (s,) in kernels}
        c.equal(len(streams), 3 if twin else 1, "three streams" if twin else "one stream")
        if twin:
            c.expect({s for _, _, s in copies_in}.isdisjoint({s for (s,) in kernels}), "copies in on their own stream")
            c.equal(t.one("SELECT count(*) FROM stream_events WHERE kind = ?", E.EVENT_WAIT), 2 * len(tiles),
                    "each tile's kernels wait for its copy in, its copy out for its kernels")
        # Tiles of uneven sizes, one after another in each device buffer: each
        # kernel reads its own tile (its launches step through the buffer), so
        # --overlap lets a tile's copy in run beside the kernels before it.
        read = kernel_data_reads(c, t)
        starts = [sum(tiles[:i]) for i in range(len(tiles))]
        c.equal([r[1:] for r in read], [tile for tile in zip(starts, tiles) for _ in range(2)],
                "each kernel reads its own tile: the copy's, then the first kernel's")
        kinds = dict(t.rows("SELECT stream, kind FROM streams"))
        c.equal({kinds.get(s) for s in streams}, {E.STREAM_BLOCKING}, "the program's streams are blocking")
        end = t.rows("SELECT e.stream, e.event_handle FROM stream_events e "
                     "WHERE e.kind = ? ORDER BY e.ns DESC LIMIT 1", E.EVENT_RECORD)
        c.equal(len(end), 1, "the end is an event record")
        if end:
            legacy, handle = end[0]
            c.equal(kinds.get(legacy), E.STREAM_LEGACY, "recorded on the legacy default stream")
            c.equal(t.rows("SELECT kind, event_handle FROM syncs WHERE kind = ?", E.SYNC_EVENT),
                    [(E.SYNC_EVENT, handle)], "cudaEventSynchronize on it")
    return check


MANAGED_ROUNDS = 3


def check_whatif_managed(prefetch):
    """Each round's kernel reads the managed input the host just wrote: one
    kernel per round and, prefetched, one prefetch of the whole input before
    each (its bytes moved to GPU 0); on demand, none and the kernels migrate
    the pages themselves."""
    def check(c, t):
        alloc = t.one("SELECT id FROM allocations WHERE kind = ?", E.MANAGED)
        c.equal(t.one("SELECT count(*) FROM kernels"), MANAGED_ROUNDS, "one kernel per round")
        rows = t.rows("SELECT bytes, dst_alloc_id, dst_device FROM memcpys WHERE kind = ?", E.PREFETCH)
        c.equal(rows, [(8 * MiB, alloc, 0)] * MANAGED_ROUNDS if prefetch else [],
                "a prefetch of the input to GPU 0 per round" if prefetch else "no prefetch")
        moved = t.one("SELECT coalesce(sum(bytes), 0) FROM um_events WHERE counter_kind = ? AND alloc_id = ?",
                      E.UM_HTOD, alloc)
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
                 "GROUP BY src_device ORDER BY src_device", E.DTOH, MiB, E.MEM_PINNED)
    c.equal(out, [(0, HALO_ITERATIONS), (1, HALO_ITERATIONS)], "each GPU's halo copied to pinned memory per iteration")
    into = t.rows("SELECT dst_device, count(*) FROM memcpys WHERE kind = ? AND bytes = ? AND src_memory = ? "
                  "GROUP BY dst_device ORDER BY dst_device", E.HTOD, MiB, E.MEM_PINNED)
    c.equal(into, [(0, HALO_ITERATIONS), (1, HALO_ITERATIONS)], "each GPU's ghost region copied in per iteration")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE kind = ? AND bytes = ?", E.HTOD, 8 * MiB), 2,
            "each domain copied in once, in set-up")
    c.equal(t.rows("SELECT device, count(*) FROM kernels GROUP BY device ORDER BY device"),
            [(0, HALO_ITERATIONS), (1, HALO_ITERATIONS)], "one kernel per GPU and iteration")
    system = os.path.join(os.path.dirname(t.path), "halo_system.json")
    with open(system, "w") as f:
        json.dump(HALO_SYSTEM, f)
    result = subprocess.run([base.APPTRACER, "whatif", t.path, "--system", system, "--peer-copies", "--format", "json"],
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


CASES = {
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
}
