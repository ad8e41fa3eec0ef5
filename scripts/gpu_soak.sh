#!/usr/bin/env bash
# On the GPU machine: the soak suite (test_apps/soak/soak.py) against an
# installed tree. Results and any hung run's stacks go to $OUT/soak when OUT
# is set, else ./gpu-results/soak.
#   scripts/gpu_soak.sh [DIST_DIR] [soak.py options: --only CASES --repeat N --scale F ...]
# Where a machine is held only for a short time, split the cases (--only)
# across runs. NVLink multicast stays off for the 2-GPU case.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=$(cd "${1:-$repo/dist}" && pwd)
shift || true
out=${OUT:-$repo/gpu-results}/soak
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L | tee "$out/devices.txt"
rm -rf /tmp/apptracer-soak
python3 "$repo/test_apps/soak/soak.py" --apptracer "$dist/bin/apptracer" --out /tmp/apptracer-soak "$@" \
  2>&1 | tee "$out/soak.log"
status=${PIPESTATUS[0]}
cp /tmp/apptracer-soak/soak.json "$out/" 2>/dev/null
find /tmp/apptracer-soak -name stacks.txt -size +0 -exec sh -c 'cp "$1" "$2/stacks-$(basename "$(dirname "$(dirname "$1")")").txt"' _ {} "$out" \; 2>/dev/null
exit "$status"
