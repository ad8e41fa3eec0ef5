// The operation that produced a piece of memory, as people read it: what it
// was (kernel, copy, memset, collective), its name, the NVTX ranges open on
// the thread that issued it ("train/forward/layer3"), its step, and where
// framework context was recorded, the module and op that issued it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/dvdg/graph.h"
#include "analyzer/trace/framework_context.h"
#include "analyzer/trace/trace.h"

namespace apptracer::memory {

struct Producer {
  std::string kind;  // "kernel", "copy", ...
  std::string name;  // a kernel's name; "HtoD copy", "memset", ...
  std::string nvtx;  // outermost first, '/' between; "" outside every range
  std::optional<int64_t> step;
  std::string module;  // "encoder.layers.0 (forward)"; "" where no framework context says
  std::string op;      // "aten::addmm"; ""
  int64_t issue_ns = 0;
};

// Describes the DVDG's ops (of a graph or of the accesses it is built
// from, from `trace`, which must outlive it), each once.
class Producers {
 public:
  explicit Producers(trace::Trace& trace);
  Producer of(const dvdg::OpTable& ops, uint32_t op);
  // The NVTX ranges open on `tid` of `process` at `ns`, outermost first.
  std::string nvtx_path(trace::ProcessId process, trace::NullableInt tid, int64_t ns);

 private:
  trace::NullableInt issuing_thread(const dvdg::Op& op);

  trace::Trace& trace_;
  // Ranges of each thread, by start.
  std::map<std::pair<trace::ProcessId, int64_t>, std::vector<const trace::Packed<NvtxRangeRow>*>> ranges_;
  std::optional<trace::PackedReader<ApiCallRow>> calls_;
  std::map<uint32_t, Producer> known_;
};

}  // namespace apptracer::memory
