#!/usr/bin/env bash
# On the GPU machine: runs every test app under the tracer with its trace
# assertions, and the launch-cost benchmark. Logs and traces go to $OUT when
# set (the device tool brings them back), else to ./gpu-results.
#   scripts/gpu_tests.sh [DIST_DIR]
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=${1:-$repo/dist}
out=${OUT:-$repo/gpu-results}
mkdir -p "$out/traces"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi -L 2>&1 | tee "$out/devices.txt"
passed=0 failed=0 skipped=0
for app in vector_add driver_vector_add streams_events host_alloc_kinds memsets malloc_async \
           multithreaded forking failing_call peer_copy; do
  python3 "$dist/test_apps/check_trace.py" "$app" --apps "$dist/test_apps" \
    --apptracer "$dist/bin/apptracer" --keep "$out/traces" 2>&1 | tee -a "$out/gpu_tests.log"
  case ${PIPESTATUS[0]} in
    0) passed=$((passed + 1)) ;;
    77) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
done
echo "gpu tests: $passed passed, $failed failed, $skipped skipped" | tee -a "$out/gpu_tests.log"
"$dist/bench/launch_cost.sh" "$dist" 100000 5 2>&1 | tee "$out/launch_cost.txt"
[ "$failed" -eq 0 ]
