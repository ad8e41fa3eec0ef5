// The API call being translated, as its handler sees it at the exit callback.
#pragma once

#include <cupti.h>

#include <cstdint>

#include "translate/capture_context.h"
#include "translate/traced_function.h"

namespace apptracer {

struct CallSite {
  CaptureContext& ctx;
  const TracedFunction& function;
  const CUpti_CallbackData* data;
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t outer_correlation_id;  // the outermost traced call on this thread
  int64_t stream = -1;            // CUPTI id of the stream the call names (set by handlers)
  bool emitted = false;           // a record describing the operation was appended
  // Stream capture made a graph node of this call: it did no work now, so
  // its handler records none (the node has the parameters).
  bool captured = false;

  template <typename Params>
  const Params& params() const {
    return *static_cast<const Params*>(data->functionParams);
  }
  bool async() const { return function.flags & kAsync; }
  bool per_thread() const { return function.flags & kPerThread; }
  int32_t device() const { return ctx.cuda.device_of(data->context); }

  // Resolves the stream the call names (its CUPTI id), remembering it for the
  // call's api_calls row, and returns it.
  int64_t name_stream(const void* handle) {
    stream = ctx.cuda.stream_id(data->context, static_cast<CUstream>(const_cast<void*>(handle)),
                                per_thread());
    return stream;
  }
};

inline uint64_t address_value(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }
inline uint64_t address_value(CUdeviceptr pointer) { return pointer; }

}  // namespace apptracer
