#!/usr/bin/env bash
# Launch-bound cost of tracing: ns per cudaLaunchKernel and per small
# cudaMemcpyAsync untraced, under a bare CUPTI subscriber enabling what the
# tracer enables (CUPTI's own floor), and under apptracer; and per launch
# after host work of the program's own, where what tracing adds beyond the
# first mode's is its cost to the host's work between calls.
#   bench/launch_cost.sh DIST_DIR [CALLS] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dist=${1:?usage: launch_cost.sh DIST_DIR [CALLS] [ROUNDS]}
calls=${2:-200000}
rounds=${3:-5}
for mode in launch memcpy-async launch-after-work; do
  "$here/compare.sh" "$mode" "$dist" "$rounds" untraced,bare,apptracer "ns per call" -- \
    "$dist/bench/launch_loop" "$mode" "$calls"
done
