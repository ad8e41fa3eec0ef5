#!/usr/bin/env bash
# Remakes docs/report.png, the README's picture: the first screen of the
# report of the bundled PyTorch training trace (the steady-state step and
# the findings), savings priced on the H200's measured paths, in headless
# Chromium at 1,400 x 1,000 px. Chromium: $APPTRACER_CHROMIUM, else
# `chromium` on the PATH (Debian's package, which scripts/setup.sh installs
# for the report's browser test).
#
#   scripts/report_screenshot.sh        (after scripts/setup.sh)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
apptracer=$(realpath "${BUILD_DIR:-$repo/build}")/analyzer/apptracer
chromium=${APPTRACER_CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ] || [ ! -x "$chromium" ]; then
  echo "report_screenshot: no Chromium: install Debian's chromium package (scripts/setup.sh does) or set APPTRACER_CHROMIUM" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$repo/examples/pytorch_train.db" "$repo/examples/h200.system.json" "$work/"
# Run where the files are, so the page names them as a user's would.
(cd "$work" && "$apptracer" report pytorch_train.db --system h200.system.json -o train.html)
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1000 \
  --virtual-time-budget=8000 --screenshot="$work/report.png" "file://$work/train.html" 2>/dev/null
cp "$work/report.png" "$repo/docs/report.png"
echo "wrote $repo/docs/report.png"
