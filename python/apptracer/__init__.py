"""apptracer from Python: traces as pandas DataFrames, the data-flow graph as
networkx, and recording from scripts and notebooks.

    import apptracer
    t = apptracer.open("app.db")            # read-only
    t.kernels                               # DataFrame: enums decoded, names joined, times in µs
    t.dvdg()                                # networkx.MultiDiGraph, built by the analyzer
    t.stats("kernels"); t.diagnose()        # the analyzer's reports as DataFrames
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
import io
import json
import os
import sqlite3
import subprocess
import sys

from . import _native

__version__ = "0.1.0"
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
        declared = schema()["tables"].get(name, {}).get("columns", [])
        times = {c["name"] for c in declared if c["role"] == "time" and c["name"].endswith("_ns")}
        present = [row[1] for row in self._db.execute(f'PRAGMA table_info("{name}")')]
        if not present:  # a view: its columns as it gives them
            present = list(self.sql(f'SELECT * FROM "{name}" LIMIT 0').columns)
        selected = ", ".join(f'"{c}" - {self.start_ns} AS "{c}"' if c in times else f'"{c}"'
                             for c in present)
        frame = self.sql(f'SELECT {selected} FROM "{name}"')
        return self._decode(name, frame, unit or self.unit)

    def _decode(self, name, frame, unit):
        declared = schema()["tables"].get(name)
        if declared is None:
            return frame
        enums = schema()["enums"]
        scale = TIME_UNITS[unit]
        strings = None
        renames = {}
        for column in declared["columns"]:
            column_name, role = column["name"], column["role"]
            if column_name not in frame.columns:
                continue  # a column newer than this trace
            values = frame[column_name]
            if role == "enum":
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
        import pandas
        tables = json.loads(_run(["stats", self.path, "--report", report, "--format", "json"],
                                 "stats"))
        frames = {name: pandas.DataFrame(rows) for name, rows in tables.items()}
        return next(iter(frames.values())) if len(frames) == 1 else frames

    def diagnose(self, system=None):
        """`apptracer diagnose`'s findings as a DataFrame, one row per finding
        (with `system`, savings are estimated with that system file)."""
        import pandas
        arguments = ["diagnose", self.path, "--json", "--all"]
        if system:
            arguments += ["--system", os.fspath(system)]
        return pandas.DataFrame(json.loads(_run(arguments, "diagnose"))["findings"])

    def diff(self, other, step=None, dvdg=True):
        """`apptracer diff` of this trace (A) and `other` (B: a Trace or a
        path): a dict of DataFrames, each B minus A with the largest change
        first: "operations" (kernels, copy paths, memsets, allocation kinds,
        collectives), "nvtx_ranges", "steps" (when both repeat an NVTX range,
        or `step` names one) and "dvdg" (unless `dvdg` is False)."""
        import pandas
        other = other.path if isinstance(other, Trace) else os.fspath(other)
        arguments = ["diff", self.path, other, "--json"]
        if step:
            arguments += ["--step", step]
        if not dvdg:
            arguments.append("--no-dvdg")
        tables = json.loads(_run(arguments, "diff"))
        return {name: pandas.DataFrame(rows) for name, rows in tables.items()}

    def dvdg(self, *filters):
        """The dynamic value dependence graph as a networkx MultiDiGraph, built
        by `apptracer dvdg` without storing it (the trace is not changed).
        `filters` are dvdg's export options, e.g. ("--device", "0")."""
        import networkx
        graphml = _run(["dvdg", self.path, "--no-store", "--graphml", "-", *map(str, filters)],
                       "dvdg")
        return networkx.read_graphml(io.BytesIO(graphml.encode()), force_multigraph=True)


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
def capture(path, overwrite=False):
    """Records the CUDA work of the `with` block of this process into `path`,
    without LD_PRELOAD. It attaches late: allocations made before the block
    are not in the trace (their copies and kernels still are, naming no
    allocation), nor host blocks, nor tensors PyTorch carved before it; the
    trace's meta `attach` says so. PyTorch's device is synchronized before the
    block ends so its GPU work is complete in the trace; other programs should
    synchronize themselves. Once per process (CUPTI is not re-attached)."""
    path = os.path.abspath(os.fspath(path))
    if os.path.exists(path):
        if not overwrite:
            raise FileExistsError(f"apptracer.capture: {path} exists (overwrite=True replaces it)")
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
