#!/usr/bin/env bash
# The Python API's tests (python/tests) on the package as the build lays it
# out (BUILD/python, python/CMakeLists.txt), without building the wheel
# (python.wheel runs them on the wheel): `PYTHONPATH=BUILD/python` is how a
# user runs the API from a build, and what these tests import. The package's
# bin/ is on PATH, as the wheel's console script is.
#
#   api_test.sh PYTHON SOURCE_DIR BUILD_PACKAGE_PARENT
#
# Exit 77 (skipped) when PYTHON lacks pandas, networkx or pytest.
set -euo pipefail
python=$1 src=$2 packages=$3
if ! "$python" -c 'import pandas, networkx, pytest' 2>/dev/null; then
  echo "SKIP: $python lacks pandas, networkx or pytest (scripts/setup.sh installs them)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
PATH="$packages/apptracer/bin:$PATH" APPTRACER_EXAMPLES="$src/examples" PYTHONPATH="$packages" \
  "$python" -m pytest -q -p no:cacheprovider --basetemp="$work/pytest-tmp" "$src/python/tests"
