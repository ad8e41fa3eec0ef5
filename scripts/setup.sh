#!/usr/bin/env bash
# Sets up a Debian 12 machine to build apptracer, then configures and builds it.
#
#   scripts/setup.sh            install what is missing, configure, build (./build)
#   scripts/setup.sh --demo     only what scripts/demo.sh runs: no Chromium, no
#                               Graphviz, no Python test tools, no debug info in a
#                               new build; builds the command (and, with a GPU,
#                               the tracer and the demo's programs)
#   BUILD_DIR=dir scripts/setup.sh
#
# A later run without --demo adds what the tests need to the same build
# (compiled again, with debug info).
# Idempotent: a second run installs nothing, downloads nothing, and only
# rebuilds what changed. The CUDA 13.0 toolkit comes from
# scripts/cuda_toolkit.sh: an existing installation (CUDA_HOME,
# /usr/local/cuda) when it is 13.x with CUPTI, else NVIDIA's Python wheels in
# a cache shared by all clones (APPTRACER_CACHE, default ~/.cache/apptracer),
# which also holds the Python the tests use (with the `perfetto` package).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$repo/build}
cache=${APPTRACER_CACHE:-$HOME/.cache/apptracer}

say() { printf 'setup: %s\n' "$*" >&2; }

demo=false
case "${1:-}" in
  --demo) demo=true ;;
  "") ;;
  *) say "unknown option '$1' (give --demo or nothing)"; exit 2 ;;
esac

debian_packages=(
  build-essential cmake ninja-build pkg-config python3 python3-venv
  libsqlite3-dev sqlite3 libprotobuf-dev protobuf-compiler
  libgtest-dev libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  ccache
)
# Graphviz renders `dvdg --svg`, which the tests check and the demo does not use.
$demo || debian_packages+=(graphviz)
# Node.js and npm build the report's JavaScript; Debian's unless one is installed.
command -v npm >/dev/null || debian_packages+=(nodejs npm)

install_debian_packages() {
  local missing=()
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Headless Chromium runs the report's browser test; where it cannot be
# installed, that test reports skipped (and nothing else is affected).
install_chromium() {
  dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q 'install ok installed' && return 0
  say "installing Debian's chromium (the report's browser test)"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  { "${sudo[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null; } ||
    say "chromium could not be installed: the report's browser test will be skipped"
}

# The Python the tests run: with the `perfetto` package, whose official
# schema decodes our timelines in a test, numpy, which a host-memory test
# traces, and Holistic Trace Analysis, which reads our Chrome JSON timelines
# in a test (with pandas 2: HTA 0.5 downcasts correlation ids to the smallest
# integer type, which pandas 3 then refuses to widen). The marker names the
# package set, so a cache from before a change is rebuilt.
test_python() {
  local venv=$cache/python-tools
  local packages="perfetto numpy HolisticTraceAnalysis pandas<3"
  local marker="$venv/.complete-${packages// /-}"
  if [ ! -f "$marker" ]; then
    say "installing Python test tools ($packages) into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check $packages
    touch "$marker"
  fi
  echo "$venv/bin/python"
}

install_debian_packages
$demo || install_chromium
cuda_root=$("$repo/scripts/cuda_toolkit.sh")
if $demo; then
  python=$(command -v python3)
else
  python=$(test_python)
fi

# A compiler cache makes a second build of the same sources (the wheel's
# build in the tests, a rebuild after a branch switch) take seconds instead of
# minutes.
mapfile -t launchers < <("$repo/scripts/compiler_cache.sh" "$repo" "$build_dir")
# A new demo build leaves out debug info, a third of each file's compile
# time on a 2-core machine; the tests' build has it. The demo keeps a build
# that is there, whatever its type: switching would compile everything.
build_type=RelWithDebInfo
if $demo; then
  build_type=Release
  if [ -f "$build_dir/CMakeCache.txt" ]; then
    build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
    build_type=${build_type:-Release}
  fi
fi
# Configured again when the tests' Python or build type replaces the demo's.
if [ ! -f "$build_dir/CMakeCache.txt" ] ||
   ! grep -qx "Python3_EXECUTABLE:[A-Z]*=$python" "$build_dir/CMakeCache.txt" ||
   ! grep -qx "CMAKE_BUILD_TYPE:[A-Z]*=$build_type" "$build_dir/CMakeCache.txt"; then
  cmake -S "$repo" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=$build_type -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" "${launchers[@]}" \
    -DCUDAToolkit_ROOT="$cuda_root" -DCMAKE_CUDA_COMPILER="$cuda_root/bin/nvcc" \
    -DPython3_EXECUTABLE="$python" >/dev/null
fi
targets=()
if $demo; then
  # Without a GPU the demo analyzes the bundled traces: the command alone.
  targets=(--target apptracer)
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    targets+=(apptracer_tracer vector_add um_bandwidth)
  fi
fi
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
say "built into $build_dir"
