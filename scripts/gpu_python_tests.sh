#!/usr/bin/env bash
# On a GPU machine: the Python package's recording paths on a small PyTorch
# program. apptracer.record (LD_PRELOAD through `apptracer record`) and
# apptracer.capture (in-process, attaching late) must both give a complete
# trace with kernels, copies both ways and device allocations.
#
#   scripts/gpu_python_tests.sh WHEEL     (the wheel built here: see python/README.md)
#
# Needs a Python with torch (CUDA; PYTHON, default python3) and no network:
# the wheel is installed with --no-deps beside that Python's packages. Logs and traces go to $OUT (or ./gpu-results/python).
set -euo pipefail
wheel=$(realpath "$1")
out=${OUT:-$PWD/gpu-results}/python
mkdir -p "$out"
# The interpreter that has torch (PYTHON; on the GPU machine a venv of its
# own, whose packages a venv made from it would not see): the wheel goes
# into a directory of its own, put on that interpreter's path.
py=${PYTHON:-python3}
site=$(mktemp -d)/site
"$py" -m pip install -q --no-deps --no-index --disable-pip-version-check --target "$site" "$wheel"
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$site/bin:$PATH"
# CUPTI where the tracer looks for it, unless the machine already says.
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda/lib64}

cat > "$out/torch_step.py" <<'PY'
"""A small PyTorch step: host tensors copied in, a matmul and relu, the
result copied back. `capture OUT` records only the step, in-process."""
import sys

import torch


def step():
    x = torch.randn(1024, 1024).cuda()
    w = torch.randn(1024, 1024).cuda()
    return (x @ w).relu().sum(dim=0).cpu()


if sys.argv[1] == "capture":
    import apptracer
    torch.zeros(1, device="cuda")  # CUDA is running before the capture starts
    with apptracer.capture(sys.argv[2]):
        result = step()
    try:
        with apptracer.capture(sys.argv[2] + ".again"):
            pass
        sys.exit("FAIL: a second capture in one process was accepted")
    except RuntimeError as error:
        print("second capture refused:", error)
else:
    result = step()
print("result", float(result.sum()))
PY

cat > "$out/check.py" <<'PY'
"""The same trace assertions for record and capture."""
import os
import sys

import apptracer

failures = []


def check(path, what):
    def expect(condition, text):
        if not condition:
            failures.append(f"{what}: {text}")
    expect(not os.path.exists(path + "-wal"), "a -wal is left beside the trace (not finished)")
    t = apptracer.open(path)
    expect(t.meta.get("status") == "complete", f"status {t.meta.get('status')}")
    kernels, copies, allocations = t.kernels, t.copies, t.allocations
    expect(len(kernels) > 0, "no kernels")
    expect(kernels["gpu_end_us"].notna().all(), "kernels without GPU times")
    expect({"HtoD", "DtoH"} <= set(copies["kind"]), f"copy kinds {sorted(set(copies['kind']))}")
    expect(copies["gpu_end_us"].notna().all(), "copies without GPU times")
    expect("device" in set(allocations["kind"]), "no device allocation")
    expect(len(t.devices) > 0, "no devices")
    names = ", ".join(sorted(set(kernels["demangled"].str.slice(0, 40)))[:4])
    print(f"{what}: {len(kernels)} kernels ({names}), {len(copies)} copies, "
          f"{len(allocations)} allocations, {len(t.sub_allocations)} tensors; "
          f"dvdg {t.dvdg().number_of_edges()} edges")
    return t


check(sys.argv[1], "record")
captured = check(sys.argv[2], "capture")
if not captured.meta.get("attach", "").startswith("late"):
    failures.append(f"capture: meta attach is {captured.meta.get('attach')!r}")
print("capture meta attach:", captured.meta.get("attach"))
for failure in failures:
    print("FAIL", failure)
sys.exit(1 if failures else 0)
PY

cd "$out"
rm -f record.db capture.db capture.db.again
"$py" - <<PY 2>&1 | tee record.log
import apptracer
apptracer.record(["$py", "torch_step.py", "record"], "record.db", force=True)
PY
"$py" torch_step.py capture capture.db 2>&1 | tee capture.log
"$py" check.py record.db capture.db 2>&1 | tee check.log
echo "gpu python tests: ok (logs and traces in $out)"
