#!/usr/bin/env bash
# Validates `apptracer whatif` against real runs:
#  (a) each test program's run predicted from its own trace and this
#      machine's system file (target: within 5%)
#  (b) whatif_copies from pageable memory predicted with --pin, against its
#      pinned twin's run (within 10%)
#  (c) whatif_pipeline on one stream predicted with --overlap, against its
#      three-stream twin's run (within 15%)
#  (d) the copy-bound traces of one machine predicted with another machine's
#      system file (--system2), against that machine's runs (within 10%)
#  (e) an independent program, whatif_chunked (one buffer, a chunk at a
#      time): on one stream predicted with --overlap against its runs on 4
#      streams; pageable predicted with --pin against pinned runs, and with
#      --pin --overlap against pinned runs on 4 streams (within 10%). Its
#      twins run without the tracer, 3 interleaved rounds, median.
#  (f) more independent pairs, each program traced as variant A and `whatif`
#      predicting variant B, B run without the tracer (3 interleaved rounds,
#      median); within 10% each, their median within 5%:
#      whatif_chunked at three chunk counts and sizes (one stream ->
#      4 streams with --overlap; pageable -> pinned with --pin; pageable
#      never touched before the copies out -> pinned, --pin and --pin
#      --overlap), a PyTorch training loop fed by a DataLoader
#      (test_apps/whatif_dataloader.py, pin_memory=False -> True with --pin;
#      its phase is the NVTX range "train"), a tiled pipeline of uneven tiles
#      with two kernels a tile whose end is an event on the legacy default
#      stream (test_apps/whatif_tiles.cu: registered on one stream ->
#      its overlapped twin with --overlap; pageable -> the overlapped
#      registered twin with --pin --overlap, and -> registered on one stream
#      with --pin) and, on a machine with two GPUs
#      that reach each other's memory, a halo exchange between them
#      (test_apps/whatif_halo.cu, staged through pinned host memory -> peer
#      to peer with --peer-copies). Their baselines are (a) rows.
# The time compared is the programs' work phase: whatif's "period 2", from
# the end of the set-up's cudaDeviceSynchronize to the end of the
# synchronization that ends the work (test_apps/whatif_*.cu); the whole run
# is printed beside it.
#
#   bench/whatif_validation.sh measure DIST_DIR OUT_DIR [--label NAME] [--results FILE]
#       on a GPU machine (after scripts/gpu_dist.sh; no compiler needed):
#       `apptracer links --quick`, the four runs traced, (a)-(c). Everything
#       is kept in OUT_DIR/LABEL (LABEL: the GPU, e.g. h100) for `compare`.
#   bench/whatif_validation.sh predict DIR [--apptracer BIN] [--results FILE]
#       anywhere, later: every prediction again from what `measure` kept in
#       DIR (its traces, system file and untraced times), by another analyzer.
#   bench/whatif_validation.sh compare DIR_A DIR_B [--apptracer BIN] [--results FILE]
#       anywhere, later: (d) both ways between two measured machines, then
#       the table of every check of both, and (with --results) the whatif
#       section of FILE (bench/RESULTS.md).
#
# Prints "result whatif.CHECK.MACHINE.CASE.{predicted_ms,actual_ms,error_pct}"
# lines (bench/report.py reads them) and the table; asserts nothing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
usage() { awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2; exit 2; }

# Milliseconds of a what-if JSON: FIELD (recorded_ns, baseline_ns,
# predicted_ns) of PHASE ("total" for the whole run).
ms() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
path, phase, field = sys.argv[1:]
result = json.load(open(path))
if phase == "total":
    print(result[field] / 1e6)
else:
    print(next(p[field] for p in result["phases"] if p["name"] == phase) / 1e6)
EOF
}

# The duplex factors a system file holds (`links` measures them; whatif
# slows copies both ways at once by them), as a note line for the results.
duplex_note() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
path, label = sys.argv[1:]
paths = json.load(open(path))["paths"]
factors = [f"{p['name']} {p['duplex']['factor']:.2f}" for p in paths if p.get("duplex")]
print(f"note whatif {label} duplex (each way's bandwidth both ways at once / alone): "
      + (", ".join(factors) or "not measured"))
EOF
}

# One comparison: prints its result lines.
# The median of the numbers in FILE, one per line.
median() {
  sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

compare_line() {
  local key=$1 predicted=$2 actual=$3
  python3 - "$key" "$predicted" "$actual" <<'EOF'
import sys
key, predicted, actual = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
print(f"result {key}.predicted_ms {predicted:.4f}")
print(f"result {key}.actual_ms {actual:.4f}")
print(f"result {key}.error_pct {100 * (predicted - actual) / actual:.2f}")
EOF
}

# Writes the whatif section of RESULTS from LOG (bench/report.py).
write_results() {
  local log=$1 results=$2 device=$3 report
  report=$(mktemp)
  cat "$log" >"$report"
  echo "note whatif measured with apptracer links --quick, the work phase of each program (period 2; the PyTorch loop's NVTX range train); targets: a 5%, b 10%, c 15%, d 10%, e 10%, f 10% (median of e and f 5%)" >>"$report"
  python3 "$here/report.py" --log "$report" --results "$results" --device "$device" \
    --date "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    --commit "$("$here/commit.sh" "${dist:-}")"
  rm -f "$report"
}

table() {
  python3 - "$1" <<'EOF'
import sys
rows = {}
for line in open(sys.argv[1]):
    words = line.split()
    if len(words) == 3 and words[0] == "result" and words[1].startswith("whatif."):
        key, metric = words[1].rsplit(".", 1)
        rows.setdefault(key, {})[metric] = float(words[2])
targets = {"a": 5, "b": 10, "c": 15, "d": 10, "e": 10, "f": 10}
print(f"{'check':<6}{'machine':<14}{'case':<34}{'predicted ms':>14}{'actual ms':>12}{'error':>9}  target")
for key in sorted(rows):
    _, check, machine, case = key.split(".", 3)
    r = rows[key]
    error = r.get("error_pct", float("nan"))
    verdict = "met" if abs(error) <= targets[check] else "NOT met"
    print(f"{check:<6}{machine:<14}{case:<34}{r.get('predicted_ms', 0):>14.3f}{r.get('actual_ms', 0):>12.3f}"
          f"{error:>8.1f}%  {targets[check]}% {verdict}")
EOF
}

# The programs traced: NAME:COMMAND, the command's first word a test
# program (test_apps; a .py one runs under python3). (a)-(c) and (e):
own_runs=("copies-pageable:whatif_copies" "copies-pinned:whatif_copies --pinned"
          "pipeline-1:whatif_pipeline --streams 1" "pipeline-3:whatif_pipeline --streams 3"
          "chunked-pageable:whatif_chunked --pageable 1" "chunked-1:whatif_chunked")
# (f): each size traced on one stream from pinned, touched pageable and
# untouched pageable memory; the PyTorch loop from pageable memory.
sizes=("24x4:--chunks 24 --chunk-mib 4" "6x64:--chunks 6 --chunk-mib 64"
       "48x1:--chunks 48 --chunk-mib 1 --work 800")
pair_runs=("chunked-fresh:whatif_chunked --pageable 1 --touch-out 0")
for size in "${sizes[@]}"; do
  pair_runs+=("chunked-${size%%:*}-1:whatif_chunked ${size#*:}"
              "chunked-${size%%:*}-pageable:whatif_chunked ${size#*:} --pageable 1"
              "chunked-${size%%:*}-fresh:whatif_chunked ${size#*:} --pageable 1 --touch-out 0")
done
pair_runs+=("dataloader-pageable:whatif_dataloader.py --pin-memory 0" "halo-staged:whatif_halo"
           "tiles-1:whatif_tiles" "tiles-pageable:whatif_tiles --registered 0")

# Runs COMMAND (a NAME:COMMAND's command) from the test programs in APPS,
# after PREFIX (e.g. apptracer record ... --).
run_app() {
  local apps=$1 program=${2%% *} args=""
  [ "$program" = "$2" ] || args=${2#* }
  shift 2
  # shellcheck disable=SC2086  # the program's arguments are words
  case $program in
    *.py) "$@" python3 "$apps/$program" $args ;;
    *) "$@" "$apps/$program" $args ;;
  esac
}

measure() {
  local dist=$1 out=$2 label=$3 results=$4
  dist=$(cd "$dist" && pwd)
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  local apptracer=$dist/bin/apptracer apps=$dist/test_apps
  if [ -z "$label" ]; then
    label=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true) | head -n 1 |
      grep -oE '\b[A-Z][0-9]{2,4}\b' | head -n 1 | tr 'A-Z' 'a-z' || true)
    label=${label:-gpu}
  fi
  local dir=$out/$label
  mkdir -p "$dir"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$dir/device.txt" 2>/dev/null ||
    echo "$label" >"$dir/device.txt"
  cp "$dist/COMMIT" "$dir/measured_commit" 2>/dev/null || true
  local started=$SECONDS
  "$apptracer" links --quick -f -o "$dir/system.json" | tee "$dir/links.txt"
  echo "links --quick: $((SECONDS - started)) s" | tee -a "$dir/timings.txt"
  local torch=1 halo=1 halo_check run
  python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || torch=0
  # The halo pair needs two GPUs with peer access: its peer run says when not (exit 77).
  if ! halo_check=$(run_app "$apps" "whatif_halo --peer 1 --iterations 2" 2>&1); then
    halo=0
    echo "whatif_validation: halo pair skipped: $halo_check" | tee -a "$dir/timings.txt"
  fi
  for run in "${own_runs[@]}" "${pair_runs[@]}"; do
    local name=${run%%:*} command=${run#*:}
    [ "$torch" = 1 ] || [[ $command != *.py* ]] || continue
    [ "$halo" = 1 ] || [[ $command != whatif_halo* ]] || continue
    started=$SECONDS
    run_app "$apps" "$command" "$apptracer" record -f -o "$dir/$name.db" -- | tee -a "$dir/programs.txt"
    echo "$name: $((SECONDS - started)) s" | tee -a "$dir/timings.txt"
  done

  # The twins predicted, untraced: each program times its own work.
  local round twin size
  for round in 1 2 3; do
    for twin in 1 4; do
      run_app "$apps" "whatif_chunked --streams $twin" | sed -n 's/^work_ms //p' >>"$dir/chunked-$twin.untraced"
    done
    for size in "${sizes[@]}"; do
      for twin in 1 4; do
        run_app "$apps" "whatif_chunked ${size#*:} --streams $twin" | sed -n 's/^work_ms //p' \
          >>"$dir/chunked-${size%%:*}-$twin.untraced"
      done
    done
    for twin in 0 1; do
      run_app "$apps" "whatif_tiles --twin $twin" | sed -n 's/^work_ms //p' >>"$dir/tiles-twin$twin.untraced"
    done
    if [ "$torch" = 1 ]; then
      run_app "$apps" "whatif_dataloader.py --pin-memory 1" | sed -n 's/^work_ms //p' \
        >>"$dir/dataloader-pinned.untraced"
    fi
    if [ "$halo" = 1 ]; then
      run_app "$apps" "whatif_halo --peer 1" | sed -n 's/^work_ms //p' >>"$dir/halo-peer.untraced"
    fi
  done
  predict_all "$dir" "$apptracer" "$results"
}

# Every prediction of the checks from the traces and untraced times a
# `measure` kept in DIR, with APPTRACER; then the table (and RESULTS).
predict_all() {
  local dir=$1 apptracer=$2 results=$3 label run
  label=$(basename "$dir")
  predict() {  # NAME CHANGE OPTIONS...: NAME's trace with OPTIONS, as NAME.CHANGE.json
    local name=$1 change=$2
    shift 2
    "$apptracer" whatif "$dir/$name.db" --system "$dir/system.json" "$@" --force -o "$dir/$name.$change.json" &&
    "$apptracer" whatif "$dir/$name.db" --system "$dir/system.json" "$@" --force -o "$dir/$name.$change.txt"
  }
  local traced=()
  for run in "${own_runs[@]}" "${pair_runs[@]}"; do
    [ -f "$dir/${run%%:*}.db" ] && traced+=("${run%%:*}")
  done
  local name
  for name in "${traced[@]}"; do predict "$name" baseline; done
  predict copies-pageable pin --pin
  predict pipeline-1 overlap --overlap
  predict chunked-1 overlap --overlap
  predict chunked-pageable pin --pin
  predict chunked-pageable pin-overlap --pin --overlap
  local size tag
  for size in "${sizes[@]}"; do
    tag=${size%%:*}
    predict "chunked-$tag-1" overlap --overlap
    predict "chunked-$tag-pageable" pin --pin
    predict "chunked-$tag-fresh" pin --pin
    predict "chunked-$tag-fresh" pin-overlap --pin --overlap
  done
  if [ -f "$dir/tiles-1.db" ] && [ -f "$dir/tiles-pageable.db" ]; then
    predict tiles-1 overlap --overlap
    predict tiles-pageable pin --pin
    predict tiles-pageable pin-overlap --pin --overlap
  fi
  [ -f "$dir/dataloader-pageable.db" ] && predict dataloader-pageable pin --pin
  [ -f "$dir/halo-staged.db" ] && predict halo-staged peer-copies --peer-copies

  local log=$dir/results.log
  duplex_note "$dir/system.json" "$label" >"$log"
  if [ -s "$dir/measured_commit" ]; then
    echo "note whatif $label traced and timed with the tracer of commit $(cat "$dir/measured_commit")" >>"$log"
  fi
  for run in "${own_runs[@]}"; do
    local json=$dir/${run%%:*}.baseline.json
    compare_line "whatif.a.$label.${run%%:*}-work" "$(ms "$json" "period 2" baseline_ns)" \
      "$(ms "$json" "period 2" recorded_ns)" >>"$log"
    compare_line "whatif.a.$label.${run%%:*}-whole-run" "$(ms "$json" total baseline_ns)" \
      "$(ms "$json" total recorded_ns)" >>"$log"
  done
  compare_line "whatif.b.$label.copies-pageable-pin-vs-pinned" \
    "$(ms "$dir/copies-pageable.pin.json" "period 2" predicted_ns)" \
    "$(ms "$dir/copies-pinned.baseline.json" "period 2" recorded_ns)" >>"$log"
  compare_line "whatif.c.$label.pipeline-1-overlap-vs-3" \
    "$(ms "$dir/pipeline-1.overlap.json" "period 2" predicted_ns)" \
    "$(ms "$dir/pipeline-3.baseline.json" "period 2" recorded_ns)" >>"$log"
  compare_line "whatif.e.$label.chunked-1-overlap-vs-4" \
    "$(ms "$dir/chunked-1.overlap.json" "period 2" predicted_ns)" "$(median "$dir/chunked-4.untraced")" >>"$log"
  compare_line "whatif.e.$label.chunked-pageable-pin-vs-pinned" \
    "$(ms "$dir/chunked-pageable.pin.json" "period 2" predicted_ns)" "$(median "$dir/chunked-1.untraced")" >>"$log"
  compare_line "whatif.e.$label.chunked-pageable-pin-overlap-vs-4" \
    "$(ms "$dir/chunked-pageable.pin-overlap.json" "period 2" predicted_ns)" \
    "$(median "$dir/chunked-4.untraced")" >>"$log"
  for run in "${pair_runs[@]}"; do
    local phase="period 2"
    name=${run%%:*}
    [ -f "$dir/$name.db" ] || continue
    [ "$name" = dataloader-pageable ] && phase=train
    compare_line "whatif.a.$label.$name-work" "$(ms "$dir/$name.baseline.json" "$phase" baseline_ns)" \
      "$(ms "$dir/$name.baseline.json" "$phase" recorded_ns)" >>"$log"
  done
  for size in "${sizes[@]}"; do
    tag=${size%%:*}
    compare_line "whatif.f.$label.chunked-$tag-overlap-vs-4" \
      "$(ms "$dir/chunked-$tag-1.overlap.json" "period 2" predicted_ns)" "$(median "$dir/chunked-$tag-4.untraced")" >>"$log"
    compare_line "whatif.f.$label.chunked-$tag-pageable-pin-vs-pinned" \
      "$(ms "$dir/chunked-$tag-pageable.pin.json" "period 2" predicted_ns)" "$(median "$dir/chunked-$tag-1.untraced")" >>"$log"
    compare_line "whatif.f.$label.chunked-$tag-fresh-pin-vs-pinned" \
      "$(ms "$dir/chunked-$tag-fresh.pin.json" "period 2" predicted_ns)" "$(median "$dir/chunked-$tag-1.untraced")" >>"$log"
    compare_line "whatif.f.$label.chunked-$tag-fresh-pin-overlap-vs-4" \
      "$(ms "$dir/chunked-$tag-fresh.pin-overlap.json" "period 2" predicted_ns)" \
      "$(median "$dir/chunked-$tag-4.untraced")" >>"$log"
  done
  if [ -f "$dir/tiles-1.overlap.json" ]; then
    compare_line "whatif.f.$label.tiles-1-overlap-vs-twin" \
      "$(ms "$dir/tiles-1.overlap.json" "period 2" predicted_ns)" "$(median "$dir/tiles-twin1.untraced")" >>"$log"
    compare_line "whatif.f.$label.tiles-pageable-pin-overlap-vs-twin" \
      "$(ms "$dir/tiles-pageable.pin-overlap.json" "period 2" predicted_ns)" \
      "$(median "$dir/tiles-twin1.untraced")" >>"$log"
    compare_line "whatif.f.$label.tiles-pageable-pin-vs-registered" \
      "$(ms "$dir/tiles-pageable.pin.json" "period 2" predicted_ns)" "$(median "$dir/tiles-twin0.untraced")" >>"$log"
  fi
  if [ -f "$dir/dataloader-pageable.db" ]; then
    compare_line "whatif.f.$label.dataloader-pin-vs-pinned" \
      "$(ms "$dir/dataloader-pageable.pin.json" train predicted_ns)" "$(median "$dir/dataloader-pinned.untraced")" >>"$log"
  fi
  if [ -f "$dir/halo-staged.db" ]; then
    compare_line "whatif.f.$label.halo-staged-peer-copies-vs-peer" \
      "$(ms "$dir/halo-staged.peer-copies.json" "period 2" predicted_ns)" "$(median "$dir/halo-peer.untraced")" >>"$log"
  fi
  cat "$log"
  table "$log"
  if [ -n "$results" ]; then
    local device
    device=$(head -n 1 "$dir/device.txt" 2>/dev/null || echo "$label")
    write_results "$log" "$results" "$device"
  fi
  echo "kept in $dir; later: bench/whatif_validation.sh predict $dir (again, with another analyzer) or compare $dir OTHER_MACHINE_DIR --results bench/RESULTS.md"
}

compare() {
  local a=$1 b=$2 apptracer=$3 results=$4
  local log
  log=$(mktemp)
  trap 'rm -f "$log"' RETURN
  cat "$a/results.log" "$b/results.log" >"$log"
  local from to
  for pair in "$a $b" "$b $a"; do
    read -r from to <<<"$pair"
    local name
    for name in copies-pinned copies-pageable; do
      local json=$from/$name.on-$(basename "$to").json
      "$apptracer" whatif "$from/$name.db" --system "$from/system.json" --system2 "$to/system.json" \
        -f -o "$json" &&
        "$apptracer" whatif "$from/$name.db" --system "$from/system.json" --system2 "$to/system.json" \
          -f -o "${json%.json}.txt"
      compare_line "whatif.d.$(basename "$from")-to-$(basename "$to").$name-work" \
        "$(ms "$json" "period 2" predicted_ns)" "$(ms "$to/$name.baseline.json" "period 2" recorded_ns)" \
        | tee -a "$log"
    done
  done
  table "$log"
  if [ -n "$results" ]; then
    local device
    device="$(head -n 1 "$a/device.txt" 2>/dev/null) and $(head -n 1 "$b/device.txt" 2>/dev/null)"
    write_results "$log" "$results" "$device"
  fi
}

# The analyzer to predict with: BIN if given, else this repository's.
find_apptracer() {
  local candidate
  for candidate in "$1" "$repo/dist/bin/apptracer" "${BUILD_DIR:-$repo/build}/analyzer/apptracer"; do
    [ -n "$candidate" ] && [ -x "$candidate" ] && echo "$candidate" && return
  done
  echo "whatif_validation: no apptracer binary; pass --apptracer BIN" >&2
  exit 2
}

# The options after a mode's operands (each mode uses those it names).
label="" results="" apptracer=""
parse_options() {
  while [ $# -gt 0 ]; do
    case $1 in
      --label) label=${2:?--label needs a name}; shift ;;
      --results) results=${2:?--results needs a file}; shift ;;
      --apptracer) apptracer=${2:?--apptracer needs a path}; shift ;;
      *) usage ;;
    esac
    shift
  done
}

[ $# -ge 1 ] || usage
mode=$1
shift
case $mode in
  measure)
    [ $# -ge 2 ] || usage
    dist=$1 out=$2
    shift 2
    parse_options "$@"
    measure "$dist" "$out" "$label" "$results"
    ;;
  predict)
    [ $# -ge 1 ] || usage
    dir=$(cd "$1" && pwd)
    shift
    parse_options "$@"
    predict_all "$dir" "$(find_apptracer "$apptracer")" "$results"
    ;;
  compare)
    [ $# -ge 2 ] || usage
    a=$(cd "$1" && pwd) b=$(cd "$2" && pwd)
    shift 2
    parse_options "$@"
    compare "$a" "$b" "$(find_apptracer "$apptracer")" "$results"
    ;;
  *) usage ;;
esac
