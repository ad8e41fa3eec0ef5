#!/usr/bin/env bash
# Sets up if needed, builds, and runs every test. GPU tests (label `gpu`)
# report skipped on machines without a GPU. Exits non-zero on any failure.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$repo/build}
"$repo/scripts/setup.sh"
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)"
