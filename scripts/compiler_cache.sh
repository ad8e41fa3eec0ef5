#!/usr/bin/env bash
# Prints the CMake definitions that put ccache in front of the compilers, one
# per line, or nothing without ccache. Given the source and build directories,
# so that another build of the same sources at the same depth (the wheel's,
# beside the test build) hits the cache: ccache rewrites paths under their
# common ancestor relative to the build directory, and leaves the directory
# out of its hash. ccache also hashes the compiler's name: every build names
# them cc and c++ (the wheel's build environment would pick g++ where CMake
# alone picks c++, and miss every object).
#
#   scripts/compiler_cache.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
command -v ccache >/dev/null || exit 0
source_dir=$(realpath -m "$1")
build_dir=$(realpath -m "$2")
base=$source_dir
while [ "$base" != / ] && [[ "$build_dir/" != "$base/"* ]]; do base=$(dirname "$base"); done
launcher="env;CCACHE_BASEDIR=$base;CCACHE_NOHASHDIR=true;ccache"
for language in C CXX CUDA; do echo "-DCMAKE_${language}_COMPILER_LAUNCHER=$launcher"; done
echo "-DCMAKE_C_COMPILER=$(command -v cc)"
echo "-DCMAKE_CXX_COMPILER=$(command -v c++)"
