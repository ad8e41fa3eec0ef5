#!/usr/bin/env bash
# Runs one benchmark program untraced and under tracers, the variants
# interleaved within each round (the GPU machine is noisy: one run proves
# nothing), and prints each variant's per-round values and median.
#   bench/compare.sh NAME DIST ROUNDS VARIANTS UNIT -- PROGRAM [ARGS...]
# PROGRAM prints its cost per operation in UNIT on its last line; a program
# that prints no number there is compared by its process wall time only. A
# program that runs several workloads prints "KEY=VALUE KEY=VALUE ..." there:
# each is then compared as NAME-KEY (its wall time is the whole process's).
# VARIANTS is a comma-separated list of
#   untraced        the program alone
#   untraced-busy=N the program alone with N processes spinning on its cores: what a tracer
#                   thread's CPU costs the program where the two share cores (or their caches)
#   bare            preloaded bare CUPTI subscriber: what apptracer enables, recording nothing
#   bare-without=PART[+PART...]  the same without those parts of the enable set
#                   (bare_cupti_subscriber.cpp lists them; runtime-launch: without the runtime's
#                   cudaLaunchKernel callback, each launch firing only the nested driver launch's)
#   apptracer       preloaded libapptracer.so, set up as `apptracer record` sets it up
#                   (the Python bootstrap on PYTHONPATH: framework allocators' blocks recorded)
#   apptracer-from=DIR  apptracer as above from another install (DIR/lib/libapptracer.so): a
#                   change's before and after, interleaved in one run
#   apptracer-no-hooks  the same with --framework-allocators=off (no Python bootstrap)
#   apptracer-context=MODE  apptracer with APPTRACER_FRAMEWORK_CONTEXT=MODE (off, modules, on):
#                   what recording PyTorch's modules and ops costs
#   apptracer-no-host   the same with --host-allocations=off (the allocator not watched)
#   apptracer-host-min=BYTES  apptracer tracking host blocks of BYTES or more only
#                   (--host-min-bytes): what the tracked blocks cost beside every call's hook
#   apptracer-core the callbacks and the writer alone: --framework-allocators=off --host-allocations=off
#   apptracer-all   the same with --host-allocations=all (every host block >= 4 KiB a row)
#   apptracer-no-args  apptracer without launch arguments (APPTRACER_KERNEL_ARGUMENTS=off)
#   apptracer-timing  apptracer as `apptracer record --level timing` sets it up (no launch
#                   arguments, host blocks or framework blocks)
#   apptracer-um=LIST   apptracer with --unified-memory=LIST (e.g. all, gpu-faults, off)
#   bare-graph-trace[=PART+...]  the bare subscriber also enabling CUPTI's graph-trace activity
#                   (a graph launch one record, not one per node), without those parts if named
#   bare-um=LIST        the bare subscriber enabling those unified-memory counters
#   torch-profiler  BENCH_TORCH_PROFILER=1: the program runs itself under torch.profiler
#   apptracer-emit-nvtx  apptracer (framework context off) with BENCH_EMIT_NVTX=1: the program
#                   runs under torch.autograd.profiler.emit_nvtx, an NVTX range per op
#   xla-platform    XLA_PYTHON_CLIENT_ALLOCATOR=platform, untraced: what the per-buffer mode costs by itself
#   apptracer-per-buffer  apptracer as `apptracer record --framework-allocators=per-buffer` sets it up
#   record          `apptracer record -- PROGRAM` itself
#   record-exact    `apptracer record --exact -- PROGRAM`: where CUPTI and the sanitizer cannot share a
#                   process, two runs and their join; the last line is then the first run's (record
#                   keeps the sanitizer run's output in its own log), so compare these by wall time
# BENCH_CPUS=LIST (taskset's syntax, e.g. 2-9) runs every variant on those cores only: on a
# shared or virtual host, where the scheduler puts a process moves its cost by more than a
# tracer's (rounds of one variant bimodal), so rankings of small parts want it fixed.
# Each series also prints its spread: the largest round over the smallest.
# Also prints "result NAME.VARIANT.per_op VALUE" and "result NAME.VARIANT.wall_ms VALUE"
# (median process wall time: includes loading, set-up and the trace's final write)
# for bench/report.py.
set -euo pipefail
usage="usage: compare.sh NAME DIST ROUNDS VARIANTS UNIT -- PROGRAM [ARGS...]"
[ $# -ge 7 ] && [ "$6" = "--" ] || { echo "$usage" >&2; exit 2; }
name=$1 dist=$2 rounds=$3 unit=$5
IFS=, read -r -a variants <<<"$4"
shift 6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs the program once as VARIANT; prints "<per-op value> <wall ms>".
run_variant() {
  local variant=$1 env=()
  shift
  local busy=0
  case $variant in
    untraced) ;;
    untraced-busy=*) busy=${variant#*=} ;;
    bare) env=(LD_PRELOAD="$dist/bench/libbare_cupti_subscriber.so") ;;
    bare-graph-trace*) env=(LD_PRELOAD="$dist/bench/libbare_cupti_subscriber.so" BARE_GRAPH_TRACE=1
                            BARE_WITHOUT="$([[ $variant == *=* ]] && echo "${variant#*=}")") ;;
    bare-without=*) env=(LD_PRELOAD="$dist/bench/libbare_cupti_subscriber.so" BARE_WITHOUT="${variant#bare-without=}") ;;
    apptracer | apptracer-from=*)
      local from=$dist
      [[ $variant != apptracer-from=* ]] || from=${variant#*=}
      env=(LD_PRELOAD="$from/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db" APPTRACER_FORCE=1
           PYTHONPATH="$from/lib/apptracer-python${PYTHONPATH:+:$PYTHONPATH}"
           APPTRACER_FRAMEWORK_ALLOCATORS=hooks) ;;
    apptracer-context=*) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                              APPTRACER_FORCE=1 PYTHONPATH="$dist/lib/apptracer-python${PYTHONPATH:+:$PYTHONPATH}"
                              APPTRACER_FRAMEWORK_ALLOCATORS=hooks APPTRACER_FRAMEWORK_CONTEXT="${variant#*=}") ;;
    apptracer-no-hooks) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                             APPTRACER_FORCE=1 APPTRACER_FRAMEWORK_ALLOCATORS=off) ;;
    apptracer-no-host) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                            APPTRACER_FORCE=1 PYTHONPATH="$dist/lib/apptracer-python${PYTHONPATH:+:$PYTHONPATH}"
                            APPTRACER_FRAMEWORK_ALLOCATORS=hooks APPTRACER_HOST_ALLOCATIONS=off) ;;
    apptracer-host-min=*) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                               APPTRACER_FORCE=1 PYTHONPATH="$dist/lib/apptracer-python${PYTHONPATH:+:$PYTHONPATH}"
                               APPTRACER_FRAMEWORK_ALLOCATORS=hooks APPTRACER_HOST_MIN_BYTES="${variant#*=}") ;;
    apptracer-core) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                         APPTRACER_FORCE=1 APPTRACER_FRAMEWORK_ALLOCATORS=off APPTRACER_HOST_ALLOCATIONS=off) ;;
    apptracer-timing) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                           APPTRACER_FORCE=1 APPTRACER_FRAMEWORK_ALLOCATORS=off APPTRACER_HOST_ALLOCATIONS=off
                           APPTRACER_KERNEL_ARGUMENTS=off) ;;
    apptracer-no-args) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                            APPTRACER_FORCE=1 PYTHONPATH="$dist/lib/apptracer-python${PYTHONPATH:+:$PYTHONPATH}"
                            APPTRACER_FRAMEWORK_ALLOCATORS=hooks APPTRACER_KERNEL_ARGUMENTS=off) ;;
    apptracer-all) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                        APPTRACER_FORCE=1 APPTRACER_HOST_ALLOCATIONS=all) ;;
    apptracer-um=*) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                         APPTRACER_FORCE=1 APPTRACER_UNIFIED_MEMORY="${variant#*=}") ;;
    bare-um=*) env=(LD_PRELOAD="$dist/bench/libbare_cupti_subscriber.so"
                    APPTRACER_UNIFIED_MEMORY="${variant#*=}") ;;
    torch-profiler) env=(BENCH_TORCH_PROFILER=1) ;;
    apptracer-emit-nvtx) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                              APPTRACER_FORCE=1 PYTHONPATH="$dist/lib/apptracer-python${PYTHONPATH:+:$PYTHONPATH}"
                              APPTRACER_FRAMEWORK_ALLOCATORS=hooks APPTRACER_FRAMEWORK_CONTEXT=off
                              BENCH_EMIT_NVTX=1) ;;
    xla-platform) env=(XLA_PYTHON_CLIENT_ALLOCATOR=platform) ;;
    apptracer-per-buffer) env=(LD_PRELOAD="$dist/lib/libapptracer.so" APPTRACER_OUTPUT="$tmp/$name-%p.db"
                               APPTRACER_FORCE=1 PYTHONPATH="$dist/lib/apptracer-python${PYTHONPATH:+:$PYTHONPATH}"
                               APPTRACER_FRAMEWORK_ALLOCATORS=per-buffer XLA_PYTHON_CLIENT_ALLOCATOR=platform) ;;
    record) set -- "$dist/bin/apptracer" record -f -o "$tmp/$name.db" -- "$@" ;;
    record-exact) set -- "$dist/bin/apptracer" record --exact -f -o "$tmp/$name.db" -- "$@" ;;
    *) echo "compare.sh: unknown variant $variant" >&2; return 2 ;;
  esac
  local start end value pin=()
  [ -z "${BENCH_CPUS:-}" ] || pin=(taskset -c "$BENCH_CPUS")
  local spinners=() i
  for ((i = 0; i < busy; i++)); do
    "${pin[@]}" bash -c 'while :; do :; done' &
    spinners+=($!)
  done
  start=$(date +%s%N)
  value=$(env "${env[@]}" "${pin[@]}" "$@" 2>"$tmp/stderr" | tail -n 1) ||
    { echo "compare.sh: $name failed as $variant: $(tail -n 2 "$tmp/stderr")" >&2
      [ ${#spinners[@]} -eq 0 ] || kill "${spinners[@]}"; return 1; }
  end=$(date +%s%N)
  [ ${#spinners[@]} -eq 0 ] || { kill "${spinners[@]}"; wait "${spinners[@]}" 2>/dev/null || true; }
  local several='^([A-Za-z0-9_-]+=[0-9.]+ ?)+$'
  [[ $value =~ ^[0-9.]+$ || $value =~ $several ]] || value=-
  rm -f "$tmp"/*.db*  # traces are not kept: only their cost matters here
  echo "$(((end - start) / 1000000)) $value"
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
fastest() { printf '%s\n' "$@" | sort -g | head -n 1; }
spread() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (a[1] > 0) printf "%.2f", a[NR] / a[1]; else print "-"}'; }

# Series by name (NAME, or NAME-KEY for each workload of a several-workload
# program), in the order they first came.
declare -A per_op wall
series=()
for ((r = 0; r < rounds; r++)); do
  for v in "${variants[@]}"; do
    out=$(run_variant "$v" "$@")
    # Each run as it ends, so a call cut short still leaves its rounds.
    echo "compare.sh: round $((r + 1)) $v: $out" >&2
    read -r ms values <<<"$out"
    [[ $values == *=* ]] || values="=$values"
    for pair in $values; do
      key=${pair%%=*}
      s=$name${key:+-$key}
      [[ " ${series[*]} " == *" $s "* ]] || series+=("$s")
      per_op[$s.$v]+="${pair#*=} "
      wall[$s.$v]+="$ms "
    done
  done
done

echo "$name: $* ($rounds interleaved rounds; $unit, each round then median; process wall ms median;"
echo "  x: the median over the first variant's; spread: the largest round over the smallest;"
echo "  fastest: the smallest round and its ratio to the first variant's smallest, which the"
echo "  GPU hosts' processes that run slow for their whole run do not move)"
[ -z "${BENCH_CPUS:-}" ] || echo "  every variant on cores $BENCH_CPUS"
for s in "${series[@]}"; do
  [ "$s" = "$name" ] || echo "$s:"
  first="" first_fast=""
  for v in "${variants[@]}"; do
    # shellcheck disable=SC2086  # word splitting of the value lists is intended
    m=$(median ${per_op[$s.$v]}) w=$(median ${wall[$s.$v]}) f=$(fastest ${per_op[$s.$v]})
    [ -n "$first" ] || first=$m first_fast=$f
    x=- sp=- fx=-
    [ "$m" = - ] || [ "$first" = - ] || x=$(awk -v a="$m" -v b="$first" 'BEGIN {printf "%.2f", a / b}')
    [ "$m" = - ] || [ "$first" = - ] || fx=$(awk -v a="$f" -v b="$first_fast" 'BEGIN {printf "%.2f", a / b}')
    # shellcheck disable=SC2086
    [ "$m" = - ] || sp=$(spread ${per_op[$s.$v]})
    printf '  %-15s %s -> %s  x%s  spread %s  fastest %s x%s   wall %s ms\n' "$v" "${per_op[$s.$v]}" "$m" \
      "$x" "$sp" "$f" "$fx" "$w"
    [ "$m" = - ] || echo "result $s.$v.per_op $m"
    [ "$m" = - ] || echo "result $s.$v.fastest $f"
    echo "result $s.$v.wall_ms $w"
  done
done
