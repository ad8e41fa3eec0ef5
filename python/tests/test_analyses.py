"""What a Holistic Trace Analysis user reaches for, on the bundled traces
(examples/*.db): the analyses under HTA's names, findings as a flat table,
nullable integers, decoded views, the notebook view, and capture's `force`.
Run by tests/python/wheel_test.sh on the wheel and by tests/python/api_test.sh
on the sources. APPTRACER_EXAMPLES names the examples directory."""
import os

import pytest

import apptracer

from bundled import EXAMPLES, PYTORCH, UM, VECTOR_ADD


def test_analyses_are_named_as_hta_names_them(t):
    frames = t.analyses()
    assert set(frames) == set(apptracer.HTA_ANALYSES.values()) | {"memory_timeline"}
    breakdown = frames["temporal_breakdown"]
    assert list(breakdown["device"]) == [0]
    row = breakdown.iloc[0]
    assert row["compute_ns"] + row["memory_only_ns"] + row["idle_ns"] == row["span_ns"]
    assert str(breakdown["span_ns"].dtype) == "Int64"
    kernels = frames["gpu_kernel_breakdown"]
    computation = kernels[kernels["type"] == "computation"]
    assert list(computation["name"]) == ["vector_add(float*, float const*, float const*, int)"]
    assert list(computation["count"]) == [1]


def test_memory_at_peak_lists_what_the_peak_holds(t):
    live = t.memory_at_peak()
    gpu = live[live["device"] == "GPU 0"]
    # vector_add's three device buffers of 4 MiB, each made by a copy or the kernel.
    assert list(gpu["bytes"]) == [4 << 20] * 3
    assert set(gpu["owner"]) == {"program"}
    assert set(gpu["table"]) == {"allocations"}
    assert (gpu["first_use_ns"] <= gpu["last_use_ns"]).all()
    assert gpu["producer"].notna().all()
    peaks = t.stats("memory")["memory_peaks"]
    assert peaks[peaks["device"] == "GPU 0"]["peak_bytes"].iloc[0] == gpu["bytes"].sum()


def test_memory_timeline_peaks_where_stats_says(t):
    memory = t.analyses()["memory_timeline"]
    device = memory[memory["series"] == "GPU 0 memory allocated"]
    allocations = t.stats("allocations")
    peak = allocations[(allocations["place"] == "device 0") & (allocations["kind"] == "all")]
    assert device["bytes"].max() == peak["peak_live_bytes"].iloc[0] == 3 * (4 << 20)
    assert list(device["time_ns"]) == sorted(device["time_ns"])
    assert device["bytes"].iloc[-1] == 0  # every buffer freed
    migrated = apptracer.open(UM).analyses()["memory_timeline"]
    assert {"UM migrated HtoD", "UM migrated DtoH"} <= set(migrated["series"])


def test_findings_are_one_flat_row_each(t):
    findings = t.diagnose()
    assert {"rule", "what", "names", "rows", "cost_ns", "saving_ns", "fix"} <= set(findings.columns)
    for column in findings.columns:
        assert not any(isinstance(v, (dict, list)) for v in findings[column]), column
    assert str(findings["cost_ns"].dtype) == "Int64"
    assert str(findings["saving_ns"].dtype) == "Int64"
    pageable = findings[findings["rule"] == "pageable_copy"].iloc[0]
    assert "memcpys:" in pageable["rows"]


def test_nullable_integers_stay_integers():
    um = apptracer.open(UM)
    events = um.um_events
    assert str(events["src_device"].dtype) == "Int64"
    assert events["src_device"].isna().any() and events["src_device"].notna().any()
    assert str(um.stats("kernels")["count"].dtype) == "Int64"


def test_views_decode_their_enums(t):
    access_kinds = set(apptracer.schema()["enums"]["access_kind"].values())
    arguments = t.table("kernel_args")
    assert len(arguments) == 3
    assert set(arguments["access"]) <= access_kinds
    assert set(arguments["access_source"]) <= set(
        apptracer.schema()["enums"]["access_source"].values())


def test_notebook_view_says_what_the_trace_holds(t):
    page = t._repr_html_()
    assert "vector_add" in page and "NVIDIA H100 80GB HBM3" in page
    assert "<th style=\"text-align:left\">kernels</th><td style=\"text-align:left\">1</td>" in page


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="a GPU is here: gpu_python_tests.sh")
def test_capture_takes_force_as_record_does(tmp_path):
    path = tmp_path / "c.db"
    path.write_text("an earlier trace")
    with pytest.raises(FileExistsError, match=r"force=True replaces it"):
        with apptracer.capture(path):
            pass
    assert path.exists()
    with pytest.warns(DeprecationWarning, match="overwrite= is deprecated; use force="):
        with pytest.raises(RuntimeError, match="^apptracer.capture: "):
            with apptracer.capture(path, overwrite=True):
                pass
    assert not path.exists()  # replaced: the earlier trace is gone


def test_whatif_prices_the_steady_step_first():
    system = os.path.join(EXAMPLES, "h200.system.json")
    with apptracer.open(PYTORCH) as trace:
        graphs = trace.whatif(system, "--graphs")
        time = graphs["time"]
        assert list(time["name"][:2]) == ["total", "steady steps"]
        steps = time.iloc[1]
        assert steps["kind"] == "steps" and steps["count"] == 29
        assert 0 < steps["predicted_ns"] < steps["baseline_ns"]
        assert str(time["predicted_ns"].dtype) == "Int64"
        assert any("saved per step" in note for note in graphs["notes"])
        assert {"kind", "own_ns", "wait_ns"} <= set(graphs["critical_path"].columns)
        assert "HtoD.pageable.node0.gpu0" in set(graphs["transfers"]["path"])
        baseline = trace.whatif(system)["time"]
        assert list(baseline["predicted_ns"]) == list(baseline["baseline_ns"])
        with pytest.raises(RuntimeError):
            trace.whatif(system, "--no-such-change")


def test_an_untraced_step_prices_the_graph_saving_against_it():
    # The bundled steps take 4.8 ms traced; timed at 3.5 ms untraced, the
    # whatif's baseline step is 3.5 ms and diagnose's launch-bound saving
    # shrinks by about what tracing added to the short gaps.
    system = os.path.join(EXAMPLES, "h200.system.json")
    with apptracer.open(PYTORCH) as trace:
        steps = trace.whatif(system, "--graphs", "--untraced-step", "3.5")["time"].iloc[1]
        assert abs(steps["baseline_ns"] / steps["count"] - 3.5e6) < 0.01 * 3.5e6
        traced = trace.diagnose(system)
        untraced = trace.diagnose(system, untraced_step_ms=3.5)
    saving = {name: findings.set_index("rule").loc["launch_bound_kernels"]
              for name, findings in (("traced", traced), ("untraced", untraced))}
    assert 0 < saving["untraced"]["saving_ns"] < saving["traced"]["saving_ns"]
    assert "(--untraced-step)" in saving["untraced"]["estimate"]
