#!/usr/bin/env bash
# Wall time and peak RSS of the analyzer's commands on real traces: one
# Markdown row per command and trace. The traces are only read (dvdg does
# not store its graph); what the commands write goes to a scratch folder
# that is removed afterwards. Each command may use at most MEMORY_CAP_MIB
# of address space (default 6144): a command that needs more fails there
# instead of pushing the machine out of memory.
#
#   [MEMORY_CAP_MIB=N] bench/analyzer_real.sh APPTRACER TRACE...
#
# A long run's trace is made from a short one with bench/repeat_steps:
#   build/bench/repeat_steps gpt2_100.db gpt2_2000.db --steps 2000
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 APPTRACER TRACE..." >&2
  exit 2
fi
apptracer=$1
shift
cap_kib=$((${MEMORY_CAP_MIB:-6144} * 1024))
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Runs one command under /usr/bin/time and prints its row.
measure() {
  local name=$1 trace=$2
  shift 2
  local status=ok
  if ! (ulimit -v "$cap_kib" && exec /usr/bin/time -f "%e %U %S %M" -o "$scratch/time" "$@") \
    >/dev/null 2>"$scratch/stderr"; then
    status="failed: $(grep -v '^Command' "$scratch/stderr" | tail -n 1)"
  fi
  read -r wall user system peak_kib < <(tail -n 1 "$scratch/time")
  printf '| %s | %s | %s | %s | %d | %s |\n' "$name" "$(basename "$trace")" "$wall" \
    "$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')" $((peak_kib / 1024)) "$status"
}

echo "| command | trace | wall (s) | CPU (s) | peak RSS (MiB) | |"
echo "|---|---|---|---|---|---|"
for trace in "$@"; do
  measure dvdg "$trace" "$apptracer" dvdg --no-store "$trace"
  measure diagnose "$trace" "$apptracer" diagnose "$trace"
  measure report "$trace" "$apptracer" report "$trace" -o "$scratch/report.html" --force
  measure timeline "$trace" "$apptracer" timeline "$trace" -o "$scratch/timeline.pftrace" --force
  measure stats "$trace" "$apptracer" stats "$trace"
  measure "stats --report memory" "$trace" "$apptracer" stats "$trace" --report memory
done
