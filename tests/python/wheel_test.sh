#!/usr/bin/env bash
# The Python package as a user gets it: builds the wheel as the README says
# (scripts/build_wheel.sh: only the tracer library and the apptracer
# command, made a manylinux wheel by auditwheel), installs it into a fresh
# venv with its dependencies from PyPI, then runs the API tests on the
# bundled traces and the notebook-style example headless, checking what it
# prints.
#
#   wheel_test.sh SOURCE_DIR WORK_DIR CUDA_TOOLKIT_ROOT WHEEL_BUILD_DIR
#
# WHEEL_BUILD_DIR keeps the wheel's CMake build between runs; beside the test
# build and with its build type, it compiles little: ccache has the test
# build's objects (scripts/compiler_cache.sh). Exit 77 (skipped) only when
# PyPI cannot be reached.
set -euo pipefail
src=$1 work=$2 cuda_root=$3 wheel_build=$4
mkdir -p "$work"
cd "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

if ! python3 -m pip download -q --no-deps --disable-pip-version-check -d "$work/probe" \
    scikit-build-core >/dev/null 2>&1; then
  echo "SKIP: PyPI is not reachable (the wheel's build and dependencies come from it)"
  exit 77
fi

rm -rf wheelhouse
CUDA_HOME=$cuda_root WHEEL_BUILD_DIR="$wheel_build" WHEEL_BUILD_TYPE=RelWithDebInfo \
  "$src/scripts/build_wheel.sh" wheelhouse
wheel=$(ls wheelhouse/apptracer-*manylinux*.whl) || fail "auditwheel made no manylinux wheel"
contents=$(python3 -m zipfile -l "$wheel")
for shipped in apptracer/bin/apptracer apptracer/lib/libapptracer.so \
    apptracer/lib/apptracer-python/sitecustomize.py apptracer/__init__.py; do
  grep -q "$shipped" <<<"$contents" || fail "$wheel lacks $shipped"
done
! grep -Eq 'libcupti|libcuda\.|libcudart' <<<"$contents" || fail "$wheel bundles CUDA or CUPTI"
echo "wheel: $wheel"

rm -rf venv
python3 -m venv venv
venv/bin/pip install -q --disable-pip-version-check "$wheel[duckdb]" pytest
export PATH="$work/venv/bin:$PATH"
venv/bin/python -c 'import apptracer, sys; sys.exit(0 if "/venv/" in apptracer.__file__ else
  "apptracer imported from " + apptracer.__file__ + ", not the venv")'
apptracer schema >/dev/null || fail "the apptracer console script does not run"

# pytest keeps the temporary directories of its recent runs: in the build
# directory, not in TMPDIR, which the tests leave empty.
APPTRACER_EXAMPLES="$src/examples" venv/bin/python -m pytest -q -p no:cacheprovider \
  --basetemp="$work/pytest-tmp" "$src/python/tests"

venv/bin/python "$src/examples/notebook_tour.py" "$src/examples/vector_add.db" | tee tour.out
for expected in \
    "kernels: 1" \
    "kernel: vector_add(float*, float const*, float const*, int) grid 4096 block 256" \
    "copies: HtoD pageable->device: 2 copies, 8 MiB" \
    "copies: DtoH device->pageable: 1 copies, 4 MiB" \
    "dvdg: 10 values, 5 edges" \
    "dvdg: v10 comes from v1, v2 through DtoH copy, HtoD copy, vector_add" \
    "api: slowest call cudaMalloc" \
    "top: pageable_copy saves"; do
  grep -qF -- "$expected" tour.out || fail "notebook_tour.py did not print '$expected'"
done
echo "python package: ok"
