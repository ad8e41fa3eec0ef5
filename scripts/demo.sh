#!/usr/bin/env bash
# The main job: set up, then trace vector_add (the thesis's Fig. 6.1) and show
# what apptracer finds in it. Without a GPU, analyzes the bundled trace that
# was recorded on an H100 (examples/vector_add.db).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$repo/build}
"$repo/scripts/setup.sh"
apptracer=$build_dir/analyzer/apptracer
work=$(mktemp -d)
trace=$work/vector_add.db
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "== recording vector_add on this machine's GPU"
  "$apptracer" record -o "$trace" -- "$build_dir/test_apps/vector_add"
else
  echo "== no GPU here: analyzing the bundled trace recorded on an NVIDIA H100"
  cp "$repo/examples/vector_add.db" "$trace"
fi
echo "== apptracer info"
"$apptracer" info "$trace"
echo "== apptracer stats"
"$apptracer" stats "$trace"
echo "== apptracer dvdg: the data-flow graph (Fig. 6.1 of Pearson's thesis), as Graphviz DOT"
"$apptracer" dvdg "$trace" --dot -
echo "== where did the sum come from? (apptracer dvdg --why on the last value written)"
last=$("$apptracer" query "$trace" "SELECT 'v' || max(id) FROM dvdg_values" --format csv | tail -1 | tr -d '\r')
"$apptracer" dvdg "$trace" --no-store --why "$last"
echo "(trace kept in $trace)"
