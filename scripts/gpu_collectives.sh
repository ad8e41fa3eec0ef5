#!/usr/bin/env bash
# On a machine with 2 or more GPUs: NCCL collectives across RANKS PyTorch
# ranks (default: every GPU; from 4, sub-groups too), traced one trace per
# rank, merged, checked (test_apps/check_collectives.py); then MPI across 2
# ranks (test_apps/check_mpi.py). Logs and traces go to $OUT when set.
#   scripts/gpu_collectives.sh [DIST_DIR [RANKS]]
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dist=${1:-$repo/dist}
ranks=${2:-$(nvidia-smi -L 2>/dev/null | wc -l)}
out=${OUT:-$repo/gpu-results}
mkdir -p "$out/traces"
python=${PYTHON:-python3}
"$python" "$dist/test_apps/check_collectives.py" --apps "$dist/test_apps" \
  --apptracer "$dist/bin/apptracer" --ranks "$ranks" --keep "$out/traces" 2>&1 |
  tee "$out/collectives.log"
nccl=${PIPESTATUS[0]}
# The same across 2 MPI ranks (mpi4py over the host), where mpirun is.
"$python" "$dist/test_apps/check_mpi.py" --apps "$dist/test_apps" \
  --apptracer "$dist/bin/apptracer" --keep "$out/traces" 2>&1 | tee "$out/mpi.log"
mpi=${PIPESTATUS[0]}
case $mpi in 0 | 77) exit "$nccl" ;; *) exit 1 ;; esac
