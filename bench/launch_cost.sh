#!/usr/bin/env bash
# Cost of tracing a launch-bound program: median ns per cudaLaunchKernel,
# untraced vs traced, over interleaved rounds (the GPU machine is noisy).
#   bench/launch_cost.sh DIST_DIR [LAUNCHES] [ROUNDS]
set -euo pipefail
dist=${1:?usage: launch_cost.sh DIST_DIR [LAUNCHES] [ROUNDS]}
launches=${2:-100000}
rounds=${3:-5}
tmp=$(mktemp -d)
plain=() traced=()
for ((r = 0; r < rounds; r++)); do
  plain+=("$("$dist/bench/launch_loop" "$launches")")
  traced+=("$("$dist/bin/apptracer" record -f -o "$tmp/launch.db" -- "$dist/bench/launch_loop" "$launches")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(median "${plain[@]}")
t=$(median "${traced[@]}")
echo "launches per run: $launches, rounds: $rounds"
echo "untraced ns/launch: ${plain[*]} (median $p)"
echo "traced   ns/launch: ${traced[*]} (median $t)"
awk -v p="$p" -v t="$t" 'BEGIN { printf "added per launch: %.1f ns, ratio traced/untraced: %.2f\n", t - p, t / p }'
rm -rf "$tmp"
