#!/usr/bin/env bash
# Here: builds and installs everything the GPU machine needs into dist/
# (ignored by git, small enough to carry: the device tool's limit is 64 MiB).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$repo/scripts/setup.sh"
rm -rf "$repo/dist"
cmake --install "${BUILD_DIR:-$repo/build}" --prefix "$repo/dist" >/dev/null
strip --strip-unneeded "$repo/dist/lib/"*.so "$repo/dist/bin/"* 2>/dev/null || true
du -sh "$repo/dist"
