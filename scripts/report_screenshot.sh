#!/usr/bin/env bash
# Remakes docs/report.png, the README's picture: the first screen of the
# report of the bundled PyTorch training trace, savings priced on the H200's
# measured paths, in headless Chromium (scripts/setup.sh installs it).
#
#   scripts/report_screenshot.sh        (after scripts/setup.sh)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
apptracer=${BUILD_DIR:-$repo/build}/analyzer/apptracer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$repo/examples/pytorch_train.db" "$repo/examples/h200.system.json" "$work/"
"$apptracer" report "$work/pytorch_train.db" --system "$work/h200.system.json" -o "$work/train.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1000 \
  --virtual-time-budget=8000 --screenshot="$work/report.png" "file://$work/train.html" 2>/dev/null
cp "$work/report.png" "$repo/docs/report.png"
echo "wrote $repo/docs/report.png"
