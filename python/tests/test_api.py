"""The Python API on the bundled traces (examples/*.db), run by
tests/python/wheel_test.sh in a fresh venv with the wheel installed.
APPTRACER_EXAMPLES names the examples directory."""
import os
import re
import shutil
import subprocess
import sys

import networkx
import pandas
import pytest

import apptracer

from bundled import EXAMPLES, PYTORCH, UM, VECTOR_ADD


def test_kernels_decoded(t):
    kernels = t.kernels
    assert len(kernels) == 1
    kernel = kernels.iloc[0]
    assert kernel["demangled"] == "vector_add(float*, float const*, float const*, int)"
    assert kernel["name"] == "_Z10vector_addPfPKfS1_i"
    assert kernel["launch_kind"] == "driver"
    assert "name_id" not in kernels.columns and "gpu_start_ns" not in kernels.columns
    assert 0 < kernel["gpu_end_us"] - kernel["gpu_start_us"] < 1000


def test_copies_and_allocations(t):
    copies = t.copies
    assert list(copies["kind"]) == ["HtoD", "HtoD", "DtoH"]
    assert list(copies["src_memory"]) == ["pageable", "pageable", "device"]
    assert (copies["bytes"] == 4 << 20).all()
    kinds = t.allocations["kind"].value_counts().to_dict()
    assert kinds == {"device": 3, "pageable host": 3}
    assert {"cudaMalloc", "cudaMemcpy", "cudaFree"} <= set(t.api_calls["name"])


def test_time_units(t):
    raw = t.sql("SELECT gpu_start_ns FROM kernels")["gpu_start_ns"][0]
    in_ns = apptracer.open(VECTOR_ADD, unit="ns").kernels["gpu_start_ns"][0]
    in_ms = apptracer.open(VECTOR_ADD, unit="ms").kernels["gpu_start_ms"][0]
    assert in_ns == raw - t.start_ns
    assert in_ms == pytest.approx(in_ns / 1e6)
    with pytest.raises(ValueError, match="unit must be one of"):
        apptracer.open(VECTOR_ADD, unit="minutes")


def test_times_are_exact(t):
    """Counted from the origin before any float: every kernel's duration in µs
    is its nanoseconds / 1000 (epoch nanoseconds in a float64 lost up to 256 ns)."""
    raw = t.sql("SELECT gpu_start_ns, gpu_end_ns FROM kernels ORDER BY id")
    kernels = t.kernels.sort_values("id")
    expected = (raw["gpu_end_ns"] - raw["gpu_start_ns"]).to_numpy() / 1000
    measured = (kernels["gpu_end_us"] - kernels["gpu_start_us"]).to_numpy()
    assert list(measured) == pytest.approx(list(expected), abs=1e-6)


def test_every_table_decodes(t):
    for name in t.tables():
        assert isinstance(t.table(name), pandas.DataFrame), name
    assert t.nvtx.empty and t.syncs.shape[0] >= 0


def test_dvdg_is_the_golden_graph(t):
    g = t.dvdg()
    assert isinstance(g, networkx.MultiDiGraph)
    # The command's "10 values, 5 edges": the six buffers as allocated, the
    # four values the copies and the kernel wrote.
    assert (g.number_of_nodes(), g.number_of_edges()) == (10, 5)
    ops = g.graph["ops"]
    operations = sorted(ops[d["op_id"]]["name"] or
                        f"{ops[d['op_id']]['copy_kind']} {ops[d['op_id']]['kind']}"
                        for _, _, d in g.edges(data=True))
    assert operations == ["DtoH copy", "HtoD copy", "HtoD copy",
                          "vector_add(float*, float const*, float const*, int)",
                          "vector_add(float*, float const*, float const*, int)"]
    assert {d["version"] for _, d in g.nodes(data=True)} == {0, 1}
    assert {d["memory"] for _, d in g.nodes(data=True)} == {"pageable", "device"}
    # Built in a copy: reading the graph leaves the trace as it was.
    assert "dvdg_edges" not in t.tables()


def test_dvdg_counts_are_the_commands(tmp_path):
    """From the stored tables, whether the trace held them or not; an
    export's filters give the export's view, with the same attributes."""
    trace = shutil.copy(VECTOR_ADD, tmp_path / "t.db")
    before = open(trace, "rb").read()
    t = apptracer.open(trace)
    built = t.dvdg()
    assert open(trace, "rb").read() == before
    stored = t.dvdg(store=True)
    assert "dvdg_edges" in t.tables()
    summary = subprocess.run([apptracer._native.command(), "dvdg", str(trace), "--no-store"],
                             capture_output=True, text=True, check=True).stdout
    counts = f"{stored.number_of_nodes()} values, {stored.number_of_edges()} edges"
    assert counts in summary
    assert (built.number_of_nodes(), built.number_of_edges()) == (
        stored.number_of_nodes(), stored.number_of_edges())
    view = t.dvdg("--device", "0")
    assert view.number_of_edges() == 5 and view.number_of_nodes() == 6
    edge = next(d for _, _, d in view.edges(data=True) if view.graph["ops"][d["op_id"]]["kind"] == "copy")
    assert set(edge) == set(next(iter(stored.edges(data=True)))[2])
    assert view.graph["ops"][edge["op_id"]] == pytest.approx(stored.graph["ops"][edge["op_id"]])


def test_dvdg_access_sets_are_nodes(tmp_path):
    """A foreach optimizer kernel's possible reads and writes go through one
    node, ("access_set", op_id): the graph has the command's edges, and its
    values and sets as nodes, stored or exported alike."""
    trace = shutil.copy(PYTORCH, tmp_path / "t.db")
    t = apptracer.open(trace)
    summary = subprocess.run([apptracer._native.command(), "dvdg", str(trace), "--no-store"],
                             capture_output=True, text=True, check=True).stdout
    counts = re.search(r"(\d+) values, (\d+) edges, (\d+) access sets \((\d+) dependences\)", summary)
    values, edges, sets, dependences = map(int, counts.groups())
    assert dependences > 5 * edges
    for graph in (t.dvdg(), t.dvdg("--min-bytes", "0")):
        assert graph.number_of_edges() == edges
        access_sets = [node for node in graph if isinstance(node, tuple)]
        assert len(access_sets) == sets
        assert graph.number_of_nodes() - len(access_sets) <= values
        kind, op_id = access_sets[0]
        assert kind == "access_set" and graph.graph["ops"][op_id]["kind"] == "kernel"
        # What it read goes in, what it wrote comes out, all by its op.
        assert graph.in_degree(access_sets[0]) > 0 and graph.out_degree(access_sets[0]) > 0
        assert {d["op_id"] for _, _, d in graph.edges(access_sets[0], data=True)} == {op_id}


def test_stats_and_diagnose(t):
    kernels = t.stats("kernels")
    assert list(kernels["count"]) == [1]
    um = apptracer.open(UM).stats("um")
    assert set(um) == {"um_allocations", "um_kernels"}
    findings = t.diagnose()
    assert {"rule", "what", "cost_ns", "saving_ns", "fix"} <= set(findings.columns)
    assert "pageable_copy" in set(findings["rule"])
    with pytest.raises(RuntimeError, match="apptracer"):
        t.stats("no-such-report")


def test_diff(t):
    against_itself = t.diff(VECTOR_ADD)
    assert set(against_itself) == {"operations", "nvtx_ranges", "dvdg"}
    assert (against_itself["operations"]["change"] == "same").all()
    changes = t.diff(apptracer.open(UM), dvdg=False)
    assert "dvdg" not in changes
    operations = changes["operations"]
    assert {"category", "name", "change", "time_ns_a", "time_ns_b", "time_ns_diff"} <= set(
        operations.columns)
    assert list(operations["time_ns_diff"].abs()) == sorted(operations["time_ns_diff"].abs(),
                                                            reverse=True)
    copies = operations[operations["category"] == "copy path"]
    assert set(copies["change"]) == {"disappeared"}
    assert copies["bytes_a"].sum() == 3 * (4 << 20)


def test_merged_trace(tmp_path):
    for name in ("vector_add.db", "um_bandwidth_h100.db"):
        shutil.copy(os.path.join(EXAMPLES, name), tmp_path / name)
    merged = tmp_path / "job.db"
    # The console script the wheel installs.
    subprocess.run(["apptracer", "merge", "-o", str(merged), str(tmp_path / "vector_add.db"),
                    str(tmp_path / "um_bandwidth_h100.db")], check=True)
    job = apptracer.open(merged)
    assert job.merged and len(job.processes) == 2
    kernels = job.kernels
    assert set(kernels["process_id"]) == {1, 2}
    assert "vector_add(float*, float const*, float const*, int)" in set(kernels["demangled"])
    # Merging joins unrelated processes without losing or inventing edges.
    alone = sum(apptracer.open(tmp_path / name).dvdg().number_of_edges()
                for name in ("vector_add.db", "um_bandwidth_h100.db"))
    assert alone > 0
    assert job.dvdg().number_of_edges() == alone


def test_errors_are_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such trace file"):
        apptracer.open(tmp_path / "missing.db")
    other = tmp_path / "other.db"
    other.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError, match="is not an apptracer trace"):
        apptracer.open(other)


def test_record_host_only(tmp_path):
    # Without a GPU only host memory is recorded: enough to see record work.
    out = tmp_path / "host.db"
    program = "import ctypes; b = ctypes.create_string_buffer(1 << 20); print('ran')"
    trace = apptracer.record([sys.executable, "-c", program], out,
                             options=["--host-allocations", "all"])
    assert trace.meta["status"] == "complete"
    assert "pageable host" in set(trace.allocations["kind"])
    with pytest.raises(subprocess.CalledProcessError):
        apptracer.record([sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "fail.db",
                         options=["--host-allocations", "all"])


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="a GPU is here: gpu_python_tests.sh")
def test_capture_without_gpu_says_why(tmp_path):
    with pytest.raises(RuntimeError, match="^apptracer.capture: .*(driver|CUPTI)"):
        with apptracer.capture(tmp_path / "c.db"):
            pass
