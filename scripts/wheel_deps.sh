#!/usr/bin/env bash
# Builds the C++ libraries apptracer needs from their upstream releases, at
# the versions Debian 12 ships (those scripts/setup.sh installs and the tests
# run with), into PREFIX. For the manylinux_2_28 image (AlmaLinux 8, glibc
# 2.28) the release wheel is built in: its own packages are too old
# (protobuf 3.5 lacks proto3's `optional`, SQLite 3.26 sqlite3_changes64).
#
#   scripts/wheel_deps.sh [PREFIX]      (default /usr/local; needs cmake, curl, zlib)
set -euo pipefail

prefix=${1:-/usr/local}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jobs=$(nproc)

say() { printf 'wheel_deps: %s\n' "$*" >&2; }

# fetch NAME URL: the release's sources, unpacked into $work/NAME.
fetch() {
  say "downloading $2"
  mkdir -p "$work/$1"
  curl -fsSL --retry 3 "$2" | tar -xz -C "$work/$1" --strip-components=1
}

# cmake_install NAME [CMAKE ARGS]: configure, build and install $work/NAME.
cmake_install() {
  local name=$1
  shift
  say "building $name"
  cmake -S "$work/$name" -B "$work/$name-build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON "$@" >/dev/null
  cmake --build "$work/$name-build" -j "$jobs" >/dev/null
  cmake --install "$work/$name-build" >/dev/null
}

fetch sqlite https://www.sqlite.org/2022/sqlite-autoconf-3400100.tar.gz
say "building sqlite"
(cd "$work/sqlite" && ./configure -q --prefix="$prefix" --disable-static && make -s -j "$jobs" && make -s install)

fetch protobuf https://github.com/protocolbuffers/protobuf/releases/download/v21.12/protobuf-cpp-3.21.12.tar.gz
cmake_install protobuf -Dprotobuf_BUILD_TESTS=OFF

fetch fmt https://github.com/fmtlib/fmt/archive/refs/tags/9.1.0.tar.gz
cmake_install fmt -DFMT_TEST=OFF -DFMT_DOC=OFF

fetch spdlog https://github.com/gabime/spdlog/archive/refs/tags/v1.10.0.tar.gz
cmake_install spdlog -DSPDLOG_FMT_EXTERNAL=ON -DSPDLOG_BUILD_EXAMPLE=OFF

fetch cli11 https://github.com/CLIUtils/CLI11/archive/refs/tags/v2.1.2.tar.gz
cmake_install cli11 -DCLI11_BUILD_TESTS=OFF -DCLI11_BUILD_EXAMPLES=OFF -DCLI11_BUILD_DOCS=OFF

fetch json https://github.com/nlohmann/json/archive/refs/tags/v3.11.2.tar.gz
cmake_install json -DJSON_BuildTests=OFF

say "installed into $prefix: SQLite 3.40.1, protobuf 3.21.12, fmt 9.1.0, spdlog 1.10.0, CLI11 2.1.2, nlohmann-json 3.11.2"
