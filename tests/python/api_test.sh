#!/usr/bin/env bash
# The Python API's analysis and version tests (python/tests/test_analyses.py,
# test_version.py) on the package's sources and the built command, without
# building the wheel (python.wheel runs them on the wheel): the sources are
# laid out as the wheel installs them, bin/apptracer, lib/libapptracer.so and
# the build's _version.py beside the modules.
#
#   api_test.sh PYTHON SOURCE_DIR APPTRACER TRACER_LIBRARY VERSION_FILE
#
# Exit 77 (skipped) when PYTHON lacks pandas, networkx or pytest.
set -euo pipefail
python=$1 src=$2 apptracer=$3 tracer=$4 version_file=$5
if ! "$python" -c 'import pandas, networkx, pytest' 2>/dev/null; then
  echo "SKIP: $python lacks pandas, networkx or pytest (scripts/setup.sh installs them)"
  exit 77
fi
package=$(mktemp -d)
trap 'rm -rf "$package"' EXIT
cp -r "$src/python/apptracer" "$package/apptracer"
mkdir "$package/apptracer/bin" "$package/apptracer/lib"
ln -s "$apptracer" "$package/apptracer/bin/apptracer"
ln -s "$tracer" "$package/apptracer/lib/libapptracer.so"
ln -s "$version_file" "$package/apptracer/_version.py"
cd "$package"
APPTRACER_EXAMPLES="$src/examples" PYTHONPATH="$package" "$python" -m pytest -q -p no:cacheprovider \
  --basetemp="$package/pytest-tmp" "$src/python/tests/test_analyses.py" \
  "$src/python/tests/test_version.py"
