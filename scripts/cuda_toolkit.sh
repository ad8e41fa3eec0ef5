#!/usr/bin/env bash
# Prints the root of a CUDA 13 toolkit with CUPTI (headers, nvcc, libcupti),
# installing one when none is there. scripts/setup.sh and the wheel's build
# (python/README.md) take their toolkit from here.
#
#   cuda=$(scripts/cuda_toolkit.sh)
#
# An existing installation (CUDA_HOME, /usr/local/cuda) is used when it is
# 13.x with CUPTI; else NVIDIA's CUDA 13.0 Python wheels are installed into a
# cache shared by all clones (APPTRACER_CACHE, default ~/.cache/apptracer).
# Needs python3 with venv and a C compiler; a second run downloads nothing.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${APPTRACER_CACHE:-$HOME/.cache/apptracer}
cuda_wheel_version=13.0.2

say() { printf 'setup: %s\n' "$*" >&2; }

# Prints the root of a usable CUDA 13.x toolkit with CUPTI, or nothing.
existing_cuda() {
  local root
  for root in "${CUDA_HOME:-}" /usr/local/cuda; do
    [ -n "$root" ] && [ -x "$root/bin/nvcc" ] && [ -f "$root/include/cupti.h" ] || continue
    "$root/bin/nvcc" --version 2>/dev/null | grep -q 'release 13\.' && { echo "$root"; return; }
  done
}

# Installs the toolkit wheels into $cache and makes the tree usable by nvcc and
# CMake, which expect what a system install has and the wheels lack: lib64 -> lib,
# unversioned library links, and a libcuda stub to link test programs that call
# the driver API (found at link time only, never ahead of the real driver).
wheel_cuda() {
  local venv=$cache/cuda-$cuda_wheel_version
  local root=$venv/cuda
  if [ ! -f "$venv/.complete" ]; then
    say "installing CUDA $cuda_wheel_version toolkit wheels into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check \
      "cuda-toolkit[nvcc,cudart,cupti,crt,nvvm,cccl,sanitizer]==$cuda_wheel_version"
    local site
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    ln -sfn "$site/nvidia/cu13" "$root"
    ln -sfn lib "$root/lib64"
    ln -sfn libcudart.so.13 "$root/lib/libcudart.so"
    ln -sfn libcupti.so.13 "$root/lib/libcupti.so"
    "$repo/scripts/make_cuda_stub.sh" "$root"
    touch "$venv/.complete"
  fi
  # --exact builds against the Compute Sanitizer API (caches from before it lack it).
  if [ ! -f "$root/include/sanitizer.h" ]; then
    say "installing the Compute Sanitizer API wheel into $venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "cuda-toolkit[sanitizer]==$cuda_wheel_version"
  fi
  echo "$root"
}

root=$(existing_cuda)
[ -n "$root" ] || root=$(wheel_cuda)
say "CUDA toolkit: $root"
echo "$root"
