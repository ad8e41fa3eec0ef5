"""What every family of trace checks shares: the trace opened read-only with
its enum constants, the checker that collects failures, the case a check is
registered with and how its app is run traced, the checks every
complete trace must pass, and the run's settings (the apptracer program,
the command line) that check_trace.main sets.
"""
import os
import sqlite3
import subprocess
import types

MiB = 1 << 20

# Set by check_trace.main from its command line; checks read them as they run.
APPTRACER = None  # the apptracer program
ARGS = None  # the whole command line (a twin run is traced the same way)

# The enum values the checks compare with, by name: the numbers are read from
# each trace's enum_values table (load_enums), never copied here. Checks read
# them as E.DEVICE, E.HTOD, ...
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
E = types.SimpleNamespace()


def load_enums(db):
    """Sets E's constants from a trace's enum_values table."""
    values = {(e, n): v for e, v, n in db.execute("SELECT enum, value, name FROM enum_values")}
    for constant, key in ENUM_NAMES.items():
        setattr(E, constant, values[key])


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


def traced_command(case, args, program, output):
    env = dict(os.environ)
    if case.route == "record":
        return [args.apptracer, "record", *case.record_args, "-o", output, "--", program] + case.args, env
    env["APPTRACER_OUTPUT"] = output
    env["CUDA_INJECTION64_PATH"] = args.library
    if case.route == "cupti_in_use":
        env["LD_PRELOAD"] = args.other_subscriber
    return [program] + case.args, env


def common_checks(c, t):
    c.equal(t.meta("status"), "complete", "meta.status")
    c.expect(int(t.meta("schema_version")) >= 1, "schema_version present")
    c.expect(t.one("SELECT count(*) FROM devices") >= 1, "devices recorded")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE gpu_start_ns IS NULL AND kind != ?", E.PREFETCH),
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


# `apptracer record`'s option that records migrations and page faults (off
# by default: they slow on-demand migration), for every case that reads them.
UM_ALL = ["--unified-memory", "all"]
