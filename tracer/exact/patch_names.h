// The device callbacks of exact_patch.cu and the instructions each is
// patched into, listed once for the host (exact_capture.cpp). The names are
// the patch's extern "C" functions.
#pragma once

#define APPTRACER_EXACT_PATCHES(X)                                  \
  X(GLOBAL_MEMORY_ACCESS, apptracer_exact_access)                   \
  X(MEMCPY_ASYNC, apptracer_exact_memcpy_async)                     \
  X(BULK_COPY_GLOBAL_TO_SHARED, apptracer_exact_bulk_load)          \
  X(BULK_COPY_SHARED_TO_GLOBAL, apptracer_exact_bulk_store)         \
  X(BULK_REDUCTION_SHARED_TO_GLOBAL, apptracer_exact_bulk_reduce)
