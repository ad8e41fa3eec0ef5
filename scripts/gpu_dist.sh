#!/usr/bin/env bash
# On the build machine: builds and installs everything a GPU machine without
# a compiler needs into dist/ (ignored by git; about 12 MiB, to copy there).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$repo/scripts/setup.sh"
rm -rf "$repo/dist"
cmake --install "${BUILD_DIR:-$repo/build}" --prefix "$repo/dist" >/dev/null
strip --strip-unneeded "$repo/dist/lib/"*.so "$repo/dist/bin/"* "$repo/dist/bench/"* \
  "$repo/dist/test_apps/"* 2>/dev/null || true
# The benchmarks name this commit (bench/commit.sh).
git -C "$repo" describe --always --dirty >"$repo/dist/COMMIT" 2>/dev/null || true
du -sh "$repo/dist"
