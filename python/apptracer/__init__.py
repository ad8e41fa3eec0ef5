"""apptracer from Python: traces as pandas DataFrames, the data-flow graph as
networkx, and recording from scripts and notebooks.

    import apptracer
    t = apptracer.open("app.db")            # read-only
    t.kernels                               # DataFrame: enums decoded, names joined, times in µs
    t.dvdg()                                # networkx.MultiDiGraph, built by the analyzer
    t.stats("kernels"); t.diagnose()        # the analyzer's reports as DataFrames
    t.analyses()["temporal_breakdown"]      # Holistic Trace Analysis's analyses, by its names
    t.diff("after.db")["operations"]        # what changed from t to another run, largest first
    apptracer.record(["./app", "arg"], "app.db")
    with apptracer.capture("step.db"):      # in-process, no LD_PRELOAD (attaches late)
        train_step()

Everything that analyzes runs the `apptracer` command this package carries;
Python only reads tables and decodes them with the schema that command
prints (`apptracer schema`), so nothing here restates the trace format.
"""
import contextlib
import ctypes
import functools
import html
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import warnings

from . import _native
from ._package_version import version as _version

__version__ = _version()
__all__ = ["open", "record", "capture", "schema", "Trace", "TIME_UNITS"]

# Nanoseconds per unit for time and duration columns.
TIME_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _run(arguments, what):
    """Runs the apptracer command; its one-line error becomes the exception."""
    result = subprocess.run([_native.command()] + arguments, capture_output=True, text=True)
    if result.returncode != 0:
        message = result.stderr.strip().splitlines()
        raise RuntimeError(message[-1] if message else f"apptracer {what} failed "
                           f"(exit {result.returncode})")
    return result.stdout


@functools.lru_cache(maxsize=1)
def schema():
    """The trace schema as `apptracer schema` prints it: tables (columns with
    type, role, target, doc), views and enums."""
    return json.loads(_run(["schema"], "schema"))


def _frame(rows, columns=None):
    """Rows of the analyzer's JSON as a DataFrame: a column whose values are
    all integers (or null) is Int64, not float64 with NaN."""
    import pandas
    # As objects first: pandas would make integers beside a null floats.
    frame = pandas.DataFrame(rows, columns=columns, dtype=object)
    for name in frame.columns:
        values = [v for v in frame[name] if v is not None and v == v]
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            frame[name] = frame[name].astype("Int64")
        else:
            frame[name] = frame[name].infer_objects()
    return frame


# Holistic Trace Analysis's names (its TraceAnalysis.get_<name> methods) for
# the analyses `apptracer diagnose --analyses` computes the same way.
HTA_ANALYSES = {
    "temporal_breakdown": "temporal_breakdown",
    "idle_breakdown": "idle_time_breakdown",
    "kernel_breakdown": "gpu_kernel_breakdown",
    "launch_statistics": "cuda_kernel_launch_stats",
    "copy_compute_overlap": "comm_comp_overlap",
    "memory_bandwidth": "memory_bw_summary",
    "queue_length": "queue_length_summary",
    "kernel_sequences": "frequent_cuda_kernel_sequences",
}


def _view_sources(select):
    """A view's columns that are a table's column, from its SELECT: view
    column -> (table, column)."""
    aliases = dict((alias, table) for table, alias in
                   re.findall(r"(?:FROM|JOIN)\s+(\w+)\s+(?!ON\b|JOIN\b|WHERE\b)(\w+)", select))
    fields = select.split(" FROM ", 1)[0].split("SELECT", 1)[1]
    sources = {}
    for alias, column, renamed in re.findall(r"(\w+)\.(\w+)(?:\s+AS\s+(\w+))?", fields):
        if alias in aliases:
            sources[renamed or column] = (aliases[alias], column)
    return sources


def open(path, unit="us"):  # noqa: A001 - the module's entry point, as in sqlite3-like APIs
    """Opens a trace (one process's, or a merged one) read-only."""
    return Trace(path, unit=unit)


class Trace:
    """A trace database, read-only. Table properties are DataFrames with enum
    columns decoded to their names, string ids (`name_id`, ...) replaced by the
    text (`name`), and time columns in `unit` counted from the trace's start
    (`start_ns`, on the trace clock); their names end in the unit (`_us`)."""

    def __init__(self, path, unit="us"):
        if unit not in TIME_UNITS:
            raise ValueError(f"apptracer: unit must be one of {', '.join(TIME_UNITS)}, not {unit!r}")
        self.path = os.path.abspath(path)
        self.unit = unit
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"apptracer: {path}: no such trace file")
        self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            self.meta = dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise ValueError(f"apptracer: {path} is not an apptracer trace ({error})") from None
        if "schema_version" not in self.meta:
            self._db.close()
            raise ValueError(f"apptracer: {path} is not an apptracer trace (no schema_version)")
        self.start_ns = self._start_ns()

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<apptracer.Trace {self.path} ({self.meta.get('status', '?')}, unit {self.unit})>"

    def _repr_html_(self):
        """Jupyter's view: what the trace is of and how much it holds."""
        def count(table):
            if table not in self.tables():
                return 0
            return self._db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]

        devices = ", ".join(name for (name,) in self._db.execute(
            "SELECT name FROM devices ORDER BY id") if name) if "devices" in self.tables() else ""
        rows = [("program", self.meta.get("command_line", "?")),
                ("status", self.meta.get("status", "?")),
                ("GPUs", devices or "none recorded"),
                ("processes", len(self.processes) if self.merged else 1)]
        rows += [(table, f"{count(table):,}") for table in
                 ("kernels", "memcpys", "memsets", "allocations", "api_calls", "nvtx_ranges")]
        cells = "".join(f"<tr><th style=\"text-align:left\">{html.escape(str(name))}</th>"
                        f"<td style=\"text-align:left\">{html.escape(str(value))}</td></tr>"
                        for name, value in rows)
        return (f"<div><b>apptracer trace</b> <code>{html.escape(self.path)}</code>"
                f"<table>{cells}</table></div>")

    # --- what the trace holds ---------------------------------------------------

    @property
    def merged(self):
        """True for a trace `apptracer merge` wrote (rows carry process_id)."""
        return "merged_processes" in self.meta

    def tables(self):
        """The tables and views of this trace."""
        return [name for (name,) in self._db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")]

    def _start_ns(self):
        if self.merged:
            # Each process's own start, from process_meta; the earliest is the origin.
            row = self._db.execute("SELECT min(CAST(value AS INTEGER)) FROM process_meta "
                                   "WHERE key = 'start_ns'").fetchone()
            if row and row[0] is not None:
                return int(row[0])
        if "start_ns" in self.meta:
            return int(self.meta["start_ns"])
        return 0

    def sql(self, query, params=()):
        """Any read-only SQL on the trace, as a DataFrame (no decoding)."""
        import pandas
        return pandas.read_sql_query(query, self._db, params=params)

    def table(self, name, unit=None):
        """One table or view, decoded (see the class doc)."""
        if name not in self.tables():
            raise KeyError(f"apptracer: {self.path} has no table {name!r}")
        # Times leave SQLite already counted from the origin: nanoseconds since
        # the epoch (~1.8e18) lose their last 8 bits in a float64, so a
        # kernel of 4,672 ns read as 4.9 µs.
        declared = self._declared_columns(name) or []
        times = {c["name"] for c in declared if c["role"] == "time" and c["name"].endswith("_ns")}
        present = [row[1] for row in self._db.execute(f'PRAGMA table_info("{name}")')]
        if not present:  # a view: its columns as it gives them
            present = list(self.sql(f'SELECT * FROM "{name}" LIMIT 0').columns)
        selected = ", ".join(f'"{c}" - {self.start_ns} AS "{c}"' if c in times else f'"{c}"'
                             for c in present)
        frame = self.sql(f'SELECT {selected} FROM "{name}"')
        return self._decode(name, frame, unit or self.unit)

    def _declared_columns(self, name):
        """A table's columns as the schema declares them; a view's, those of
        the tables its columns come from (under the view's names)."""
        tables = schema()["tables"]
        if name in tables:
            return tables[name]["columns"]
        if name not in schema()["views"]:
            return None
        (select,) = self._db.execute("SELECT sql FROM sqlite_master WHERE type = 'view' AND "
                                     "name = ?", (name,)).fetchone()
        columns = []
        for column, (table, source) in _view_sources(select).items():
            declared = next((c for c in tables.get(table, {}).get("columns", [])
                             if c["name"] == source), None)
            if declared is not None:
                columns.append(dict(declared, name=column))
        return columns

    def _decode(self, name, frame, unit):
        declared = self._declared_columns(name)
        if declared is None:
            return frame
        enums = schema()["enums"]
        scale = TIME_UNITS[unit]
        strings = None
        renames = {}
        for column in declared:
            column_name, role = column["name"], column["role"]
            if column_name not in frame.columns:
                continue  # a column newer than this trace
            values = frame[column_name]
            if column["type"] == "INTEGER" and role not in ("enum", "string", "time", "duration"):
                frame[column_name] = values.astype("Int64")  # NULLs made them float64
            elif role == "enum":
                names = {int(value): text for value, text in enums[column["target"]].items()}
                frame[column_name] = values.map(names, na_action="ignore")
            elif role == "string":
                if strings is None:
                    strings = dict(self._db.execute("SELECT id, text FROM strings"))
                text_name = column_name[:-3] if column_name.endswith("_id") else column_name
                frame[column_name] = values.map(strings, na_action="ignore")
                renames[column_name] = text_name
            elif role in ("time", "duration") and column_name.endswith("_ns"):
                # Small enough now (since the origin) for a float64 to hold exactly.
                if unit == "ns":
                    frame[column_name] = values.astype("Int64")
                else:
                    frame[column_name] = values.astype("float64") / scale
                renames[column_name] = column_name[:-3] + "_" + unit
        return frame.rename(columns=renames)

    # The tables a notebook reaches for first.
    kernels = property(lambda self: self.table("kernels"), doc="GPU kernel launches")
    copies = property(lambda self: self.table("memcpys"), doc="copies and prefetches (memcpys)")
    memsets = property(lambda self: self.table("memsets"))
    allocations = property(lambda self: self.table("allocations"))
    sub_allocations = property(lambda self: self.table("sub_allocations"),
                               doc="framework allocators' blocks (PyTorch tensors, CuPy arrays)")
    api_calls = property(lambda self: self.table("api_calls"))
    nvtx = property(lambda self: self.table("nvtx_ranges"), doc="NVTX ranges and marks")
    syncs = property(lambda self: self.table("syncs"))
    stream_events = property(lambda self: self.table("stream_events"))
    um_events = property(lambda self: self.table("um_events"), doc="unified-memory counters")
    mem_advice = property(lambda self: self.table("mem_advice"))
    devices = property(lambda self: self.table("devices"))
    threads = property(lambda self: self.table("threads"))
    kernel_args = property(lambda self: self.table("kernel_args"))
    graph_nodes = property(lambda self: self.table("graph_nodes"))
    collectives = property(lambda self: self.table("collectives"))
    processes = property(lambda self: self.table("processes"),
                         doc="merged traces: one row per process")

    # --- the analyzer's answers ---------------------------------------------------

    def stats(self, report):
        """One `apptracer stats --report REPORT` table as a DataFrame (a
        report of several tables, such as `um`, gives a dict of them)."""
        tables = json.loads(_run(["stats", self.path, "--report", report, "--format", "json"],
                                 "stats"))
        frames = {name: _frame(rows) for name, rows in tables.items()}
        return next(iter(frames.values())) if len(frames) == 1 else frames

    def diagnose(self, system=None, untraced_step_ms=None):
        """`apptracer diagnose`'s findings as a flat DataFrame, one row per
        finding: rule, what, names ("; "-joined), nvtx_range, call_site,
        framework (the module and op that call was made in, where recorded),
        rows ("table:id" pairs), cost_ns, saving_ns, saving_bytes (memory
        findings: bytes off a device's peak), estimate, fix,
        correctness, occurrences, overlaps (numbers of the findings it
        overlaps). With `system`, savings are estimated with that system file;
        with `untraced_step_ms` (the steady step timed without tracing),
        the launch-bound saving is priced against it (--untraced-step)."""
        arguments = ["diagnose", self.path, "--format", "json", "--all"]
        if system:
            arguments += ["--system", os.fspath(system)]
        if untraced_step_ms is not None:
            arguments += ["--untraced-step", str(untraced_step_ms)]
        findings = []
        for finding in json.loads(_run(arguments, "diagnose"))["findings"]:
            where = finding.pop("where")
            findings.append(dict(
                finding,
                names="; ".join(where["names"]),
                nvtx_range=where["nvtx_range"],
                call_site=where["call_site"],
                framework=where["framework"],
                rows=" ".join(f"{row['table']}:{row['id']}" for row in where["rows"]),
                overlaps=", ".join(map(str, finding["overlaps"]))))
        columns = ["rule", "what", "names", "nvtx_range", "call_site", "framework", "rows", "cost_ns",
                   "saving_ns", "saving_bytes", "estimate", "fix", "correctness", "occurrences",
                   "overlaps"]
        return _frame(findings, columns)

    def memory_at_peak(self):
        """What was live at each device's peak memory in use (`apptracer stats
        --report memory`'s memory_live_at_peak), largest first: pid, device
        ("GPU 0", "host"), owner (program, pytorch tensors, pytorch cache,
        nccl/mpi, cuBLAS workspace, library workspace, pinned host, ...), table and id of the
        allocation or framework block, bytes, allocated_ns, freed_ns,
        first_use_ns, last_use_ns, and the operation that first wrote it
        (producer, producer_nvtx, producer_step, and where framework context
        was recorded producer_module and producer_op). Times in ns since the
        trace's start."""
        return self.stats("memory")["memory_live_at_peak"]

    def analyses(self):
        """Holistic Trace Analysis's single-trace analyses, computed by
        `apptracer diagnose --analyses`, as a dict of DataFrames under HTA's
        names (HTA_ANALYSES), and "memory_timeline": bytes in use per GPU and
        unified memory migrated at each change (`apptracer stats --report
        memory_timeline`), times in ns since the trace's start."""
        document = json.loads(_run(["diagnose", self.path, "--format", "json", "--analyses"], "diagnose"))
        frames = {HTA_ANALYSES.get(table["name"], table["name"]):
                  _frame(table["rows"], table["columns"]) for table in document["analyses"]}
        frames["memory_timeline"] = self.stats("memory_timeline")
        return frames

    def diff(self, other, step=None, dvdg=True):
        """`apptracer diff` of this trace (A) and `other` (B: a Trace or a
        path): a dict of DataFrames, each B minus A with the largest change
        first: "operations" (kernels, copy paths, memsets, allocation kinds,
        collectives), "nvtx_ranges", "steps" (when both repeat an NVTX range,
        or `step` names one) and "dvdg" (unless `dvdg` is False)."""
        import pandas
        other = other.path if isinstance(other, Trace) else os.fspath(other)
        arguments = ["diff", self.path, other, "--format", "json"]
        if step:
            arguments += ["--step", step]
        if not dvdg:
            arguments.append("--no-dvdg")
        tables = json.loads(_run(arguments, "diff"))
        return {name: _frame(rows) for name, rows in tables.items()}

    def whatif(self, system, *changes):
        """`apptracer whatif`: this trace replayed on the machine `system`
        describes (a file `apptracer links -o FILE` wrote), with `changes`
        as the command takes them ("--graphs", "--pin", "--no-syncs",
        "--kernel-scale", "2", ...; none: the baseline alone). A dict:
        "time", a row per phase ("total"; the steady steps where the trace
        has steps; then NVTX ranges or periods) with its recorded,
        baseline and what-if lengths; "transfers" (copies by path, and
        kernels' traffic over one); "critical_path" (the what-if's, its
        time by kind: own and waiting); "notes" (a list of strings: what
        a steady step takes and saves, what was assumed)."""
        arguments = ["whatif", self.path, "--system", os.fspath(system), *changes, "--format", "json"]
        result = json.loads(_run(arguments, "whatif"))
        total = {"name": "total", "kind": "total", "detail": "", "count": 1,
                 **{key: result[key] for key in ("recorded_ns", "baseline_ns", "predicted_ns")}}
        return {"time": _frame([total] + result["phases"], ["name", "kind", "detail", "count", "recorded_ns",
                                                             "baseline_ns", "predicted_ns"]),
                "transfers": _frame(result["transfers"]),
                "critical_path": _frame(result["critical_path"]["by_kind"]),
                "notes": result["notes"]}

    def dvdg(self, *filters, store=False):
        """The dynamic value dependence graph as a networkx MultiDiGraph: a
        node per value (its dvdg_values id, the row's other columns as
        attributes, `memory` by name), an edge per edge the graph holds
        (op_id, kind, bytes, uninitialized_read, as dvdg_edges has them);
        graph.graph["ops"] maps each op_id to its operation's kind,
        copy_kind, name (a kernel's), device, stream, and start and end in
        the trace's unit since its start.
        A kernel whose possible reads and writes reach many values (a
        foreach optimizer's) has an access set instead: a node
        ("access_set", op_id) with `access_set_op_id`, an edge into it from
        each value it may have read and one from it to each value it wrote
        (every value it wrote depends on every value it read: dvdg_edges
        lists each such pair).

        Read from the tables `apptracer dvdg` stores in the trace. A trace
        that holds none is left as it is: the graph is built and stored in a
        temporary copy; with `store=True`, in the trace itself (which then
        holds the dvdg_* tables for the next time and for SQL). Either way
        the node count is the command's "N values" plus its access sets, the
        edge count its "M edges".

        `filters` are dvdg's export options (e.g. ("--device", "0")): the
        graph as that export shows it (`apptracer dvdg --format json`), only the
        values its operations read or wrote, as `dvdg --graphml` does."""
        if filters:
            return _dvdg_view(_run(["dvdg", self.path, "--no-store", "--format", "json", "-o", "-",
                                    *map(str, filters)], "dvdg"), self.start_ns, self.unit)
        if store and not _has_stored_dvdg(self._db):
            _run(["dvdg", self.path], "dvdg")
        if _has_stored_dvdg(self._db):
            return _dvdg_from_tables(self._db, self.start_ns, self.unit)
        with tempfile.TemporaryDirectory(prefix="apptracer-dvdg-") as work:
            copy = os.path.join(work, "trace.db")
            target = sqlite3.connect(copy)
            try:
                self._db.backup(target)
            finally:
                target.close()
            # A copy is nobody's recording: stored even where the trace says it is being recorded.
            _run(["dvdg", copy, "--force"], "dvdg")
            db = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
            try:
                return _dvdg_from_tables(db, self.start_ns, self.unit)
            finally:
                db.close()


# The tables `apptracer dvdg` stores (dvdg_edges is a view over the last two).
_DVDG_TABLES = ("dvdg_ops", "dvdg_values", "dvdg_op_values", "dvdg_listed_edges")


def _has_stored_dvdg(db):
    present = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not all(table in present for table in _DVDG_TABLES):
        return False
    # A graph stored before access sets were is built again.
    return "through_set" in {row[1] for row in db.execute("PRAGMA table_info(dvdg_op_values)")}


def _enum_names(enum):
    return {int(value): name for value, name in schema()["enums"][enum].items()}


def _dvdg_from_tables(db, start_ns, unit):
    import networkx
    memory, copy_kinds = _enum_names("memory_kind"), _enum_names("copy_kind")
    scale = TIME_UNITS[unit]
    graph = networkx.MultiDiGraph()
    ops = {}
    for op_id, kind, copy_kind, name, device, stream, start, end in db.execute(
            "SELECT o.id, o.kind, o.copy_kind, s.text, o.device, o.stream, o.start_ns - ?, "
            "o.end_ns - ? FROM dvdg_ops o LEFT JOIN strings s ON s.id = o.name_id",
            (start_ns, start_ns)):
        ops[op_id] = {"kind": kind, "copy_kind": copy_kinds.get(copy_kind), "name": name,
                      "device": device, "stream": stream,
                      f"start_{unit}": start if unit == "ns" else start / scale,
                      f"end_{unit}": end if unit == "ns" else end / scale}
    graph.graph["ops"] = ops
    values = db.execute("SELECT * FROM dvdg_values ORDER BY id")
    columns = [column[0] for column in values.description]
    nodes = []
    for row in values:
        attributes = dict(zip(columns, row))
        attributes["memory"] = memory.get(attributes["memory"], attributes["memory"])
        nodes.append((attributes.pop("id"), attributes))
    graph.add_nodes_from(nodes)
    # The edges the graph holds: dvdg_edges less the pairs an access set
    # stands for. Four attributes an edge, its operation's in
    # graph.graph["ops"]: a training step's graph has a hundred thousand edges.
    held = db.execute(
        "SELECT src_value_id, dst_value_id, op_id, kind, bytes, uninitialized_read "
        "FROM dvdg_listed_edges UNION ALL "
        "SELECT r.value_id, w.value_id, o.id, 'data', NULL, r.uninitialized_read "
        "FROM dvdg_ops o JOIN dvdg_op_values r ON r.op_id = o.id AND r.written = 0 "
        "AND r.through_set = 0 JOIN dvdg_op_values w ON w.op_id = o.id AND w.written = 1 "
        "WHERE o.kind = 'kernel'")
    graph.add_edges_from(
        (src, dst, {"op_id": op_id, "kind": kind, "bytes": size, "uninitialized_read": uninitialized})
        for src, dst, op_id, kind, size, uninitialized in held)
    for value_id, op_id, written in db.execute(
            "SELECT value_id, op_id, written FROM dvdg_op_values WHERE through_set = 1"):
        access_set = ("access_set", op_id)
        if access_set not in graph:
            graph.add_node(access_set, access_set_op_id=op_id)
        ends = (access_set, value_id) if written else (value_id, access_set)
        graph.add_edge(*ends, op_id=op_id, kind="data", bytes=None, uninitialized_read=0)
    return graph


def _dvdg_view(text, start_ns, unit):
    """The graph of `apptracer dvdg --json` (an export's view), laid out as
    _dvdg_from_tables lays out the stored one."""
    import networkx
    document = json.loads(text)
    scale = TIME_UNITS[unit]
    renamed = {"producer_op": "producer_op_id", "freed_by_op": "freed_op_id"}
    graph = networkx.MultiDiGraph()
    graph.graph["ops"] = {
        op["id"]: {"kind": op["kind"], "copy_kind": op.get("copy_kind"),
                   "name": op["name"] if op["kind"] == "kernel" else None,
                   "device": op["device"], "stream": op["stream"],
                   **{f"{end}_{unit}": op[f"{end}_ns"] - start_ns if unit == "ns"
                      else (op[f"{end}_ns"] - start_ns) / scale for end in ("start", "end")}}
        for op in document["ops"]}
    graph.add_nodes_from((value.pop("id"), {renamed.get(k, k): v for k, v in value.items()
                                            if k not in ("ref", "label")})
                         for value in document["values"])
    graph.add_nodes_from((("access_set", access_set["id"]), {"access_set_op_id": access_set["id"]})
                         for access_set in document.get("access_sets", ()))

    def end(edge, side):
        # An access set's end is null, its op beside it.
        value = edge[side]
        return ("access_set", edge[f"{side}_access_set"]) if value is None else value
    graph.add_edges_from((end(edge, "src"), end(edge, "dst"), {
        "op_id": edge["op"], "kind": edge["kind"], "bytes": edge["bytes"],
        "uninitialized_read": int(edge["uninitialized_read"])}) for edge in document["edges"])
    return graph


# --- recording -----------------------------------------------------------------------


def record(command, output, force=False, options=(), check=True, unit="us"):
    """Runs `command` (a list of program and arguments) under `apptracer
    record` and opens its trace. `options` are record's other options
    (e.g. ["--host-allocations", "all"]); with `check`, a program that exits
    non-zero raises subprocess.CalledProcessError (its trace is still written)."""
    if isinstance(command, str):
        raise TypeError("apptracer.record: give the command as a list of arguments")
    arguments = [_native.command(), "record", "-o", os.fspath(output), *options]
    if force:
        arguments.append("--force")
    completed = subprocess.run(arguments + ["--", *command])
    if check and completed.returncode != 0:
        raise subprocess.CalledProcessError(completed.returncode, list(command))
    return Trace(output, unit=unit)


def _tracer_library():
    """libapptracer.so: the copy already in this process (preloaded), else
    this package's, loaded privately (RTLD_LOCAL: it interposes nothing)."""
    try:
        library = ctypes.CDLL(None)
        library.apptracer_capture_start
    except AttributeError:
        library = ctypes.CDLL(_native.TRACER_LIBRARY)
    library.apptracer_capture_start.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    library.apptracer_capture_start.restype = ctypes.c_int
    library.apptracer_capture_stop.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    library.apptracer_capture_stop.restype = ctypes.c_int
    library.apptracer_torch_attach.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    library.apptracer_torch_attach.restype = ctypes.c_int
    return library


def _torch_in_use():
    torch = sys.modules.get("torch")
    return torch if torch is not None and torch.cuda.is_initialized() else None


@contextlib.contextmanager
def capture(path, force=False, overwrite=None):
    """Records the CUDA work of the `with` block of this process into `path`,
    without LD_PRELOAD; `force` replaces an existing file, as `record`'s
    -f/--force does (`overwrite` is its old name, deprecated). It attaches late: allocations made before the block
    are not in the trace (their copies and kernels still are, naming no
    allocation), nor host blocks, nor tensors PyTorch carved before it; the
    trace's meta `attach` says so. PyTorch's device is synchronized before the
    block ends so its GPU work is complete in the trace; other programs should
    synchronize themselves. Once per process (CUPTI is not re-attached)."""
    if overwrite is not None:
        warnings.warn("apptracer.capture: overwrite= is deprecated; use force=, as record's "
                      "-f/--force", DeprecationWarning, stacklevel=3)
        force = overwrite
    path = os.path.abspath(os.fspath(path))
    if os.path.exists(path):
        if not force:
            raise FileExistsError(f"apptracer.capture: {path} exists (force=True replaces it)")
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path + suffix)
    library = _tracer_library()
    message = ctypes.create_string_buffer(1024)
    if library.apptracer_capture_start(path.encode(), message, len(message)) != 0:
        raise RuntimeError(f"apptracer.capture: {message.value.decode()}")
    torch = _torch_in_use()
    if torch is not None:
        # Tensors allocated from now on are recorded (the tracker says in meta
        # why not, when torch's version or allocator is not one it knows).
        library.apptracer_torch_attach(str(torch.__version__).encode(),
                                       str(torch.cuda.memory.get_allocator_backend()).encode())
    try:
        yield path
    finally:
        torch = _torch_in_use()
        if torch is not None:
            torch.cuda.synchronize()
        if library.apptracer_capture_stop(message, len(message)) != 0:
            raise RuntimeError(f"apptracer.capture: {message.value.decode()}")
