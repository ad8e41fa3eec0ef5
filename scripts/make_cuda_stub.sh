#!/usr/bin/env bash
# Generates CUDA_ROOT/lib/stubs/libcuda.so: every driver function declared in
# cuda.h, each failing with CUDA_ERROR_STUB_LIBRARY. Test programs that call the
# driver API link against it; at run time the soname (libcuda.so.1) finds the
# real driver. It lives under stubs/ so it is never on a run-time search path.
set -euo pipefail
root=$1
out=$root/lib/stubs
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Preprocess so versioned names (#define cuMemAlloc cuMemAlloc_v2) are the ones exported.
echo '#include <cuda.h>' | cc -E -P -I"$root/include" -x c - >"$tmp/cuda.i"
grep -oE '\bcu[A-Z][A-Za-z0-9_]*[[:space:]]*\(' "$tmp/cuda.i" | tr -d ' (' | sort -u |
  awk '{ printf "int %s(void) { return 34; }\n", $1 }' >"$tmp/stub.c"
cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$out/libcuda.so" "$tmp/stub.c"
