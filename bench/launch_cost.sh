#!/usr/bin/env bash
# Cost of tracing a launch-bound program: ns per cudaLaunchKernel untraced,
# under a bare CUPTI subscriber enabling what the tracer enables (CUPTI's own
# floor), and under apptracer. Variants are interleaved within each round
# (the GPU machine is noisy) and medians reported.
#   bench/launch_cost.sh DIST_DIR [LAUNCHES] [ROUNDS]
set -euo pipefail
dist=${1:?usage: launch_cost.sh DIST_DIR [LAUNCHES] [ROUNDS]}
launches=${2:-100000}
rounds=${3:-5}
tmp=$(mktemp -d)
loop=$dist/bench/launch_loop
plain=() bare=() traced=()
for ((r = 0; r < rounds; r++)); do
  plain+=("$("$loop" "$launches")")
  bare+=("$(LD_PRELOAD=$dist/bench/libbare_cupti_subscriber.so "$loop" "$launches")")
  traced+=("$("$dist/bin/apptracer" record -f -o "$tmp/launch.db" -- "$loop" "$launches")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(median "${plain[@]}")
b=$(median "${bare[@]}")
t=$(median "${traced[@]}")
echo "launches per run: $launches, rounds: $rounds (ns per launch, each round's value, then median)"
echo "untraced:        ${plain[*]} -> $p"
echo "bare CUPTI:      ${bare[*]} -> $b"
echo "apptracer:       ${traced[*]} -> $t"
awk -v p="$p" -v b="$b" -v t="$t" 'BEGIN {
  printf "added per launch: bare CUPTI %.0f ns, apptracer %.0f ns\n", b - p, t - p
  printf "ratios: apptracer/untraced %.2f, bare/untraced %.2f, apptracer/bare %.2f\n", t / p, b / p, t / b }'
rm -rf "$tmp"
