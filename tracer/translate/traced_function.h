// The CUDA functions the tracer records, each declared once in
// traced_functions.def with what it does and how it is called. That one list
// decides which CUPTI callbacks are enabled and which handler translates each.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <vector>

namespace apptracer {

struct CallSite;

// What a traced function does (for the registry's tests and documentation;
// the handler is what acts on it).
enum class OpKind : uint8_t {
  CallOnly,  // recorded as an api_calls row only
  Alloc,
  Free,
  Copy,
  Memset,
  Launch,
  Sync,
  Event,
  Advice,
  Prefetch,
  Graph,
  Stream,  // stream lifetime: keeps cached stream ids honest
};

// How it is called.
enum TracedFlags : uint32_t {
  kNoFlags = 0,
  kAsync = 1u << 0,      // ordered on a stream; returns before the work is done
  kPerThread = 1u << 1,  // the _ptsz/_ptds variant: the default stream is per-thread
};

using CallHandler = void (*)(CallSite& call);

struct TracedFunction {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  const char* name;  // as CUPTI names the callback id
  OpKind op;
  CallHandler handler;  // nullptr for CallOnly
  uint32_t flags;
};

// The callbacks to enable, from the same list, without the handlers (the
// benchmarks' bare CUPTI subscriber links this alone).
struct TracedCallback {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
};
const std::vector<TracedCallback>& traced_callbacks();

// Every traced function, runtime first, in declaration order.
const std::vector<TracedFunction>& traced_functions();

// The entry for a callback, or nullptr when it is not traced. O(1).
const TracedFunction* traced_function(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

}  // namespace apptracer
