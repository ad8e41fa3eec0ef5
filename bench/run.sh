#!/usr/bin/env bash
# The benchmark suite in one command: what tracing costs, side by side.
#
#   bench/run.sh [--quick] [--gpu DIST_DIR | --dist DIST_DIR] [--only SECTIONS]
#                [--analyzer-sizes N,N,...] [--results FILE]
#
#   (no DIST_DIR)   build here (scripts/setup.sh, BUILD_DIR honoured), install
#                   into $BUILD_DIR/bench-dist and run the CPU benchmarks
#   --dist DIR      use an installed tree (scripts/gpu_dist.sh makes one)
#   --gpu DIR       the same, on the GPU machine: the GPU benchmarks run too
#   --quick         tiny sizes, one round: what CI runs so the benchmarks do not rot
#   --only          comma-separated subset of: launch malloc fork nvtx store analyzer pytorch real
#                   training um pytorch-hooks jax exact trace-size whatif
#   --results FILE  default bench/RESULTS.md
# REAL_WORKLOADS (environment) narrows the real section, e.g. "transformer":
# a device call runs ten minutes at most.
#
# Sections: launch (GPU: empty-kernel launches and small cudaMemcpyAsyncs,
# untraced / bare CUPTI subscriber / apptracer), malloc (allocation churn,
# untraced / apptracer), store (writer throughput, database bytes per
# operation), analyzer (stats and dvdg time and memory, 10k to 10M
# operations), pytorch (GPU: MLP training steps, untraced / bare CUPTI
# subscriber / torch.profiler / apptracer), training (GPU, only when asked for:
# ResNet-, ViT- and GPT-style training steps, all three in one process per
# variant and round so that 5 rounds fit in one device call; then each under
# record --self-cost), pytorch-hooks (GPU: the same steps with and
# without the caching allocator's blocks recorded, more rounds), exact (GPU:
# test programs and MLP steps untraced / apptracer record / record --exact),
# trace-size (GPU: bytes per kernel launch of the MLP steps' trace),
# jax (GPU, where jax is installed: jitted
# MLP training steps, untraced / XLA's platform allocator / apptracer /
# apptracer --framework-allocators=per-buffer), whatif (GPU, only when asked for:
# whatif predictions against real runs, bench/whatif_validation.sh; its
# files stay in $WHATIF_OUT, default a temporary directory). Benchmarks print, they assert
# nothing; the exit status only says whether every benchmark ran. FILE gets the sections measured in this run
# (with device, date and commit) and keeps the others.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

quick=0 gpu=0 dist="" only="" analyzer_sizes="" results=$here/RESULTS.md
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --gpu) gpu=1 dist=${2:?--gpu needs DIST_DIR}; shift ;;
    --dist) dist=${2:?--dist needs DIST_DIR}; shift ;;
    --only) only=${2:?--only needs a list}; shift ;;
    --analyzer-sizes) analyzer_sizes=${2:?--analyzer-sizes needs a list}; shift ;;
    --results) results=${2:?--results needs a file}; shift ;;
    *) sed -n '3,11p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
  esac
  shift
done

if [ -z "$dist" ]; then
  build_dir=${BUILD_DIR:-$repo/build}
  BUILD_DIR=$build_dir "$repo/scripts/setup.sh"
  dist=$build_dir/bench-dist
  cmake --install "$build_dir" --prefix "$dist" >/dev/null
  # Installed libraries look for CUPTI where the GPU machine keeps it; here
  # it is where the build found it.
  cupti=$(sed -n 's/^CUPTI_LIBRARY:FILEPATH=//p' "$build_dir/CMakeCache.txt")
  export LD_LIBRARY_PATH=$(dirname "$cupti")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
dist=$(cd "$dist" && pwd)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

if [ -z "$only" ]; then
  only=malloc,fork,nvtx,store,analyzer
  [ "$gpu" = 1 ] && only=launch,pytorch,real,um,pytorch-hooks,jax,exact,trace-size,$only
fi
wanted() { [[ ",$only," == *",$1,"* ]]; }

if [ "$quick" = 1 ]; then
  rounds=1 torch_rounds=1 launch_calls=20000 churn_calls=20000 store_ops=20000 steps=20 real_steps=8 warmup=5 size_steps=2
  training_rounds=1 training_steps=4 training_warmup=2
  nvtx_pairs=20000 nvtx_sustained_pairs= exact_steps=5 exact_warmup=2
  dvdg_kernels=10000
  : "${analyzer_sizes:=10000,100000}"
else
  # PyTorch runs cost seconds each (importing torch): fewer rounds.
  rounds=5 torch_rounds=3 launch_calls=200000 churn_calls=2000000 store_ops=1000000 steps=200 real_steps=100 warmup=20
  # Five rounds of five variants of three programs in one device call: few steps.
  training_rounds=5 training_steps=20 training_warmup=10
  size_steps=20
  # 100,000 pairs fit in the default 64 MiB of record buffers (128 B per
  # push or pop): the cost to the program. 1,000,000 do not: then the
  # program waits for the writer to store ranges, and the loop measures that.
  nvtx_pairs=100000 nvtx_sustained_pairs=1000000
  # Under the sanitizer a step is slow: fewer of them.
  exact_steps=30 exact_warmup=5
  dvdg_kernels=1000000
  : "${analyzer_sizes:=10000,100000,1000000,10000000}"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log
failed=()
# Runs one benchmark, its output on the terminal and in the log.
step() {
  local name=$1
  shift
  echo "== $name" | tee -a "$log"
  "$@" 2>&1 | tee -a "$log" || failed+=("$name")
}
note() { echo "note $*" | tee -a "$log"; }

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
cpu_name=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
device="${gpu_name:+$gpu_name, }$cpu_name ($(nproc) cores)"

if wanted launch; then
  note launch "$launch_calls calls per run, $rounds interleaved rounds, median"
  step launch "$dist/bench/launch_cost.sh" "$dist" "$launch_calls" "$rounds"
fi
if wanted malloc; then
  note malloc "$churn_calls calls per thread per run, $rounds interleaved rounds, median"
  # What the preloaded tracer does in a program that never calls CUDA.
  if [ -n "$gpu_name" ]; then
    note malloc "a GPU driver is present: apptracer (default) watches the allocator and keeps host blocks >= 4 KiB in its live map"
  else
    note malloc "no GPU driver here: apptracer (default) has nothing to watch for and forwards each call"
  fi
  note malloc "apptracer-all: --host-allocations=all, every host block >= 4 KiB becomes a row"
  for threads in 1 2; do
    step "malloc $threads thread(s)" "$here/compare.sh" "malloc-t$threads" "$dist" "$rounds" \
      untraced,apptracer,apptracer-all "ns per call" -- "$dist/bench/malloc_churn" "$threads" "$churn_calls"
  done
fi
if wanted fork; then
  note fork "50 forks per run while 2 threads malloc and free 4-64 KiB blocks, each child exiting at once; $rounds interleaved rounds, median"
  note fork "the number is the median fork() call; wall time includes each child writing its own trace at exit (apptracer-all)"
  step "fork while allocating" "$here/compare.sh" fork-t2 "$dist" "$rounds" \
    untraced,apptracer,apptracer-all "us per fork (median)" -- "$dist/test_apps/host_fork_while_allocating" 50 2
fi
if wanted nvtx; then
  note nvtx "$nvtx_pairs push+pop pairs per run on one thread, $rounds interleaved rounds, median; untraced: no NVTX tool (each call reaches an empty function, as nvtx3's do)"
  # Without a GPU driver the tracer records only in --host-allocations=all mode.
  traced=apptracer
  [ -n "$gpu_name" ] || { traced=apptracer-all; note nvtx "no GPU driver here: traced with --host-allocations=all"; }
  step nvtx "$here/compare.sh" nvtx "$dist" "$rounds" "untraced,$traced" "ns per push+pop" -- \
    "$dist/test_apps/host_nvtx_client" --loop "$nvtx_pairs"
  if [ -n "$nvtx_sustained_pairs" ]; then
    note nvtx "sustained: $nvtx_sustained_pairs pairs per run, more than the record buffers hold"
    step "nvtx sustained" "$here/compare.sh" nvtx-sustained "$dist" "$rounds" "untraced,$traced" \
      "ns per push+pop" -- "$dist/test_apps/host_nvtx_client" --loop "$nvtx_sustained_pairs"
  fi
fi
if wanted store; then
  note store "$store_ops operations per run"
  for run in mixed:1 mixed:2 launch:1 launch:2 copy:1 host-alloc:1 tensor:1; do
    step "store ${run%:*} ${run#*:} thread(s)" "$dist/bench/store_throughput" --mix "${run%:*}" \
      --threads "${run#*:}" --ops "$store_ops" --trace "$work/store.db"
  done
fi
if wanted analyzer; then
  step analyzer "$dist/bench/analyzer_scaling" --apptracer "$dist/bin/apptracer" \
    --sizes "$analyzer_sizes" --dir "$work"
  # The same DVDG with the device buffers as tensors in segments (sub_allocations).
  for layout in plain sub-allocations; do
    step "analyzer dvdg $layout" "$dist/bench/dvdg_bench" --apptracer "$dist/bin/apptracer" \
      --kernels "$dvdg_kernels" --copies $((dvdg_kernels / 10)) --trace "$work/dvdg_bench.db" \
      $([ "$layout" = sub-allocations ] && echo --sub-allocations)
  done
fi
if wanted whatif; then
  step whatif "$here/whatif_validation.sh" measure "$dist" "${WHATIF_OUT:-$work/whatif}"
fi
if wanted pytorch; then
  note pytorch "$steps steps after $warmup warm-up steps per run, $torch_rounds interleaved rounds, median"
  step pytorch "$here/compare.sh" pytorch "$dist" "$torch_rounds" \
    untraced,bare,torch-profiler,apptracer \
    "us per step" -- python3 "$here/pytorch_steps.py" "$steps" "$warmup"
fi
if wanted real; then
  note real "$real_steps steps after $warmup warm-up steps per run (generate: $((real_steps / 4)) calls), $torch_rounds interleaved rounds, median"
  note real "core: callbacks and writer only (--framework-allocators=off --host-allocations=off); no-hooks: framework allocators off; no-host: host allocations off"
  for workload in ${REAL_WORKLOADS:-transformer generate dataloader}; do
    n=$real_steps
    [ "$workload" = generate ] && n=$((real_steps / 4))
    step "real $workload" "$here/compare.sh" "real-$workload" "$dist" "$torch_rounds" \
      untraced,bare,apptracer-core,apptracer-no-hooks,apptracer-no-host,apptracer,torch-profiler \
      "us per step" -- python3 "$here/real_steps.py" "$workload" "$n" "$warmup"
    step "real $workload self-cost" python3 "$here/self_cost.py" "$dist" "$workload" "$n" "$warmup"
  done
fi
if wanted training; then
  note real "training: resnet, vit and transformer one after the other in one process per variant and round, $training_steps steps after $training_warmup warm-up steps each, $training_rounds interleaved rounds, median"
  note real "no-hooks: framework allocators off; self-cost: $((training_steps / 2)) and $((3 * training_steps / 2)) steps differenced"
  step "real training" "$here/compare.sh" real "$dist" "$training_rounds" \
    untraced,bare,apptracer-no-hooks,apptracer,torch-profiler \
    "us per step" -- python3 "$here/real_steps.py" resnet,vit,transformer "$training_steps" "$training_warmup"
  for workload in resnet vit transformer; do
    step "real $workload self-cost" python3 "$here/self_cost.py" "$dist" "$workload" \
      "$((training_steps / 2))" "$training_warmup"
  done
fi
if wanted um; then
  note um "a 2 GiB managed array filled by the CPU, then read by a kernel: GiB/s of that first run (on-demand migration), $rounds interleaved rounds, median"
  note um "bare-um=X / apptracer-um=X: the bare CUPTI subscriber / apptracer recording the unified-memory counters X (record --unified-memory)"
  step "unified memory on demand" "$here/compare.sh" um-on-demand "$dist" "$rounds" \
    untraced,bare-um=off,bare-um=default,bare-um=all,apptracer-um=off,apptracer-um=migrations,apptracer,apptracer-um=cpu-faults,apptracer-um=gpu-faults,apptracer-um=all \
    "GiB/s (on demand)" -- sh -c "\"\$0\" --size 2G --runs 2 | sed -n 's/^um_bandwidth: run 1: \([0-9.]*\) GiB.*/\\1/p'" \
    "$dist/test_apps/um_bandwidth"
fi
if wanted pytorch-hooks; then
  # The ≤ 5% target compares two variants a few percent apart on a noisy
  # machine: twice the rounds, those two only.
  note pytorch-hooks "$steps steps after $warmup warm-up steps per run, $((2 * torch_rounds)) interleaved rounds, median"
  step pytorch-hooks "$here/compare.sh" pytorch-hooks "$dist" "$((2 * torch_rounds))" \
    apptracer-no-hooks,apptracer "us per step" -- python3 "$here/pytorch_steps.py" "$steps" "$warmup"
fi
if wanted trace-size && ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  echo "bench: trace-size not measured: python3 has no torch with a GPU" >&2
elif wanted trace-size; then
  note trace-size "bench/pytorch_steps.py recorded with $size_steps and with $((size_steps * 11)) steps (no warm-up); an added launch's bytes are the difference between the two traces over the difference in launches"
  step trace-size python3 "$here/trace_size.py" "$dist/bin/apptracer" "$size_steps" "$((size_steps * 11))" "$work"
fi
if wanted exact; then
  note exact "process wall time, $torch_rounds interleaved rounds, median; where the sanitizer and CUPTI cannot share a process --exact runs the program twice and joins the runs, all counted"
  for app in vector_add kernel_args exact_patterns; do
    step "exact $app" "$here/compare.sh" "exact-$app" "$dist" "$torch_rounds" untraced,record,record-exact \
      "process wall" -- "$dist/test_apps/$app"
  done
  step "exact pytorch" "$here/compare.sh" exact-pytorch "$dist" "$torch_rounds" untraced,record,record-exact \
    "us per step" -- python3 "$here/pytorch_steps.py" "$exact_steps" "$exact_warmup"
fi
if wanted jax && ! python3 -c "import jax" 2>/dev/null; then
  echo "bench: jax not measured: python3 cannot import jax" >&2
elif wanted jax; then
  note jax "$steps steps after $warmup warm-up steps per run, $torch_rounds interleaved rounds, median"
  # What --framework-allocators=per-buffer costs: XLA's platform allocator
  # alone (xla-platform), and traced in that mode; the bare subscriber says
  # how much of the default mode's cost is CUPTI's.
  step jax "$here/compare.sh" jax "$dist" "$torch_rounds" \
    untraced,xla-platform,bare,apptracer,apptracer-per-buffer \
    "us per step" -- python3 "$here/jax_steps.py" "$steps" "$warmup"
fi

# BENCH_COMMIT names the commit where the tree's git metadata cannot (the GPU
# machine gets a copy of the working tree whose .git may be older).
commit=$("$here/commit.sh" "$dist")
python3 "$here/report.py" --log "$log" --results "$results" --device "$device" \
  --date "$(date -u '+%Y-%m-%d %H:%M UTC')" --commit "$commit"${gpu_name:+ --gpu-host}
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench: failed to run: ${failed[*]}" >&2
  exit 1
fi
