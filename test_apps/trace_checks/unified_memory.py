"""Unified memory (um_bandwidth): a managed array read by a kernel run after
run, with no advice, read-mostly, a preferred location on the host (with
and without access by the GPU), or prefetched in tiles. Migrations, page
faults, remote mappings, advice and prefetches must be recorded, resolved
to the array and attributed to the run they happened in, as diagnose's
unified-memory rules and whatif read them; by default (no --unified-memory)
none are, and the trace says so.

What CUPTI delivers on the H100 (driver 580, CUPTI 13.0) sets the thresholds:
a burst of fault-driven migrations is reported only in part (40-70% of the
bytes of a 256 MiB array, almost none of its GPU page-fault groups; CUPTI
says nothing of the loss), while prefetches and advice-time remote mappings
are reported whole.
"""
from .base import E, UM_ALL, Case, MiB

UM_SIZE, UM_SMALL, UM_RUNS, UM_TILE = 256 * MiB, 64 * MiB, 5, 16 * MiB
UM_TIMING = "um_bandwidth: run "


def um_args(size=UM_SIZE, *more):
    return ["--size", str(size), "--mode", "read", "--runs", str(UM_RUNS)] + list(more)


class UmRuns:
    """The managed array and its runs: one kernel each, whose GPU time window
    the unified-memory events inside it are attributed to."""

    def __init__(self, c, t, size=UM_SIZE):
        self.t, self.size = t, size
        self.alloc = t.one("SELECT id FROM allocations WHERE kind = ? AND bytes = ?", E.MANAGED, size)
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
              f"{[round(b / MiB, 1) for b in self.per_run('sum(bytes)', E.UM_HTOD)]}, "
              f"GPU fault rows {self.per_run('count(*)', E.UM_GPU_FAULT)}, "
              f"remote-map rows {self.per_run('count(*)', E.UM_REMOTE_MAP)}")
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


def check_um_migrates_once(c, t):
    """No placement advice: run 1 faults the array over, later runs find it there."""
    um = UmRuns(c, t)
    if c.failures:
        return
    um.report()
    htod = um.per_run("sum(bytes)", E.UM_HTOD)
    c.expect(UM_SIZE // 4 <= htod[0] <= UM_SIZE * 11 // 10,
             f"run 1 migrates the array (at least the quarter CUPTI always reports): {htod[0]} bytes")
    c.expect(all(b < UM_SIZE // 20 for b in htod[1:]), f"later runs migrate < 5%: {htod}")
    c.expect(t.one("SELECT count(*) FROM um_events WHERE counter_kind = ?", E.UM_GPU_FAULT) > 0,
             "GPU page-fault rows")
    um.check_resolution(c)


def check_um_default(c, t):
    check_um_migrates_once(c, t)
    c.equal(t.one("SELECT count(*) FROM mem_advice"), 0, "no advice")


def check_um_default_counters(c, t):
    """By default neither migrations nor page faults are recorded (they slow
    on-demand migration), and the trace says so."""
    c.equal(t.one("SELECT count(*) FROM um_events WHERE counter_kind IN (?, ?, ?, ?)",
                  E.UM_HTOD, E.UM_DTOH, E.UM_GPU_FAULT, E.UM_CPU_FAULT),
            0, "no migration or page-fault rows")
    counters = t.meta("um_counters") or ""
    c.expect("not asked for: bytes HtoD, bytes DtoH, CPU page fault, GPU page fault group, bytes DtoD"
             in counters, f"meta says what was not asked for: {counters!r}")


def check_um_read_mostly(c, t):
    check_um_migrates_once(c, t)
    c.equal(t.rows("SELECT advice, bytes, alloc_offset FROM mem_advice"),
            [(E.ADVICE_READ_MOSTLY, UM_SIZE, 0)], "read-mostly advice on the whole array")


def check_um_preferred_cpu(c, t):
    """Preferred location host, accessed by GPU 0: the advice maps the pages into the GPU
    (remote mappings, cause policy) and no run migrates them."""
    um = UmRuns(c, t)
    if c.failures:
        return
    um.report()
    advice = t.rows("SELECT advice, location_type, location_id, bytes, alloc_id, alloc_offset, "
                    "call_correlation_id IS NOT NULL FROM mem_advice ORDER BY ns")
    c.equal(advice, [(E.ADVICE_PREFERRED, E.LOCATION_HOST, None, UM_SIZE, um.alloc, 0, 1),
                     (E.ADVICE_ACCESSED_BY, E.LOCATION_DEVICE, 0, UM_SIZE, um.alloc, 0, 1)],
            "preferred location host, then accessed by GPU 0, each recorded once")
    mapped = um.of_array("sum(bytes)", E.UM_REMOTE_MAP, E.CAUSE_POLICY)
    c.expect(abs(mapped - UM_SIZE) <= UM_SIZE // 10, f"the array is mapped remotely: {mapped} bytes")
    htod = um.per_run("sum(bytes)", E.UM_HTOD)
    c.expect(all(b < UM_SIZE // 20 for b in htod), f"runs migrate < 5%: {htod}")
    um.check_resolution(c)


def check_um_remote_map(c, t):
    """Preferred location host only: the GPU faults and the driver maps host pages for it."""
    um = UmRuns(c, t, UM_SMALL)
    if c.failures:
        return
    um.report()
    c.expect(um.in_run(0, "count(*)", E.UM_GPU_FAULT) > 0, "run 1's GPU page faults resolve to the array")
    c.expect(um.in_run(0, "count(*)", E.UM_REMOTE_MAP) > 0, "run 1 maps the array remotely")
    c.equal(t.one("SELECT group_concat(DISTINCT cause) FROM um_events WHERE counter_kind = ? "
                  "AND alloc_id = ?", E.UM_REMOTE_MAP, um.alloc), str(E.CAUSE_POLICY),
            "remote mappings caused by the preferred location")
    htod = um.per_run("sum(bytes)", E.UM_HTOD)
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
                  "is_async FROM memcpys WHERE kind = ? ORDER BY api_start_ns", E.PREFETCH)
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
    prefetched = um.of_array("sum(bytes)", E.UM_HTOD, E.CAUSE_USER)
    c.equal(prefetched, UM_SIZE, "the prefetch migrates the array once, reported whole")
    htod = um.per_run("sum(bytes)", E.UM_HTOD)
    c.expect(all(b < UM_SIZE // 20 for b in htod), f"kernels migrate < 5%: {htod}")
    um.check_resolution(c)


CASES = {
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
}
