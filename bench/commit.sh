#!/usr/bin/env bash
# The commit a benchmark measured, for RESULTS.md: BENCH_COMMIT if set, else
# the one the installed tree was built from (DIST/COMMIT, written by
# scripts/gpu_dist.sh: the GPU machine's copy of the checkout may not be at
# that commit), else the checkout's.
#   bench/commit.sh [DIST_DIR]
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -n "${BENCH_COMMIT:-}" ]; then
  echo "$BENCH_COMMIT"
elif [ -n "${1:-}" ] && [ -s "$1/COMMIT" ]; then
  cat "$1/COMMIT"
else
  git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown
fi
