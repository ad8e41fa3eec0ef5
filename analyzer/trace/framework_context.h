// Which framework module and op issued each launch, copy, memset and
// allocation: the join of work issued on a thread at a time to the
// framework ranges (framework_ranges) open on that thread then.
//
// Its module: the innermost module whose forward was running (forward);
// else, in backward, the module whose forward created the autograd node
// being run (the last forward op with the node's sequence number ran inside
// it); else the innermost named scope torch opened ("Optimizer.step#SGD.step").
// Its op: the innermost op running (aten::cudnn_convolution), else the
// backward node (ConvolutionBackward0).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/trace/packed_rows.h"

namespace apptracer::trace {

class Trace;

enum class ModulePhase : uint8_t { None, Forward, Backward, Scope };
// "", "forward", "backward", "scope".
std::string_view to_string(ModulePhase phase);

struct FrameworkContext {
  int64_t module_id = 0;  // strings.id of the module's path (or scope's name); 0: none
  int64_t op_id = 0;      // strings.id of the op's name; 0: none
  int64_t op_end_ns = 0;  // when that op (or backward node) ended; INT64_MAX: still open
  ModulePhase phase = ModulePhase::None;
};

class FrameworkContexts {
 public:
  // Reads framework_ranges and the calls' threads; a trace without
  // framework ranges attributes nothing.
  explicit FrameworkContexts(Trace& trace);

  // Whether the trace has any framework range.
  bool recorded() const { return !threads_.empty(); }

  // The context of work issued on thread `tid` of `process` at `ns`.
  FrameworkContext issued(ProcessId process, NullableInt tid, NullableInt ns) const;
  // Of a kernel, copy or memset: where its API call was issued.
  FrameworkContext of_call(ProcessId process, NullableInt call_correlation_id) const;

 private:
  struct Range {
    int64_t start_ns;
    int64_t end_ns;  // INT64_MAX: still open at the end
    int64_t depth;
    int64_t name_id;
    int64_t seq;  // -1: none
  };
  // One thread's ranges of each kind, by start.
  struct ThreadRanges {
    std::vector<Range> modules, ops, backward, scopes;
  };
  using ThreadKey = std::pair<ProcessId, int64_t>;

  static const Range* innermost(const std::vector<Range>& ranges, int64_t ns);
  const ThreadRanges* thread(ProcessId process, int64_t tid) const;

  std::map<ThreadKey, ThreadRanges> threads_;
  // By node_key(process, autograd sequence number): the module whose forward
  // created the node.
  static int64_t node_key(ProcessId process, int64_t seq) { return (seq << 16) | process; }
  std::unordered_map<int64_t, int64_t> module_of_node_;
  // Every API call: its thread and start, by process and correlation id.
  struct Call {
    ProcessId process;
    int64_t correlation_id;
    NullableInt tid;
    int64_t start_ns;
  };
  std::vector<Call> calls_;
};

}  // namespace apptracer::trace
