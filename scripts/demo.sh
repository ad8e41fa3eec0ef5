#!/usr/bin/env bash
# The main job: set up, then trace vector_add (the thesis's Fig. 6.1) and show
# what apptracer finds in it; then a managed-memory program's migrations;
# ends by writing the HTML report and saying where it is.
# Without a GPU, analyzes the bundled traces recorded on an H100
# (examples/vector_add.db, examples/um_bandwidth_h100.db).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$repo/build}
"$repo/scripts/setup.sh" --demo
apptracer=$build_dir/analyzer/apptracer
work=$(mktemp -d)
trace=$work/vector_add.db
um_trace=$work/um_bandwidth.db
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "== recording vector_add on this machine's GPU"
  "$apptracer" record -o "$trace" -- "$build_dir/test_apps/vector_add"
  "$apptracer" record -o "$um_trace" -- "$build_dir/test_apps/um_bandwidth" --size 256M --runs 5
else
  echo "== no GPU here: analyzing the bundled traces recorded on an NVIDIA H100"
  cp "$repo/examples/vector_add.db" "$trace"
  cp "$repo/examples/um_bandwidth_h100.db" "$um_trace"
fi
echo "== apptracer info"
"$apptracer" info "$trace"
echo "== apptracer stats"
"$apptracer" stats "$trace"
echo "== apptracer dvdg: the data-flow graph (Fig. 6.1 of Pearson's thesis), as Graphviz DOT"
"$apptracer" dvdg "$trace" --format dot -o -
echo "== where did the sum come from? (apptracer dvdg --why on the last value written)"
last=$("$apptracer" query "$trace" "SELECT 'v' || max(id) FROM dvdg_values" --format csv | tail -1 | tr -d '\r')
"$apptracer" dvdg "$trace" --no-store --why "$last"
echo "== unified memory: a 256 MiB managed array read by 5 kernel runs (apptracer stats --report um)"
"$apptracer" stats "$um_trace" --report um
echo "== apptracer diagnose: what to fix in vector_add, with estimated savings"
"$apptracer" diagnose "$trace"
echo "== apptracer report: everything above as one HTML page"
"$apptracer" report "$um_trace" -o "$work/um_bandwidth.html"
"$apptracer" report "$trace" -o "$work/vector_add.html"
echo "(traces kept in $work)"
echo "report of the vector_add trace: $work/vector_add.html (self-contained: open it in any browser, offline)"
