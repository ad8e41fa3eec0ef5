// Which framework module and op issued each launch, copy, memset and
// allocation: the join of work issued on a thread at a time to the
// framework ranges (framework_ranges) open on that thread then.
//
// Its module: the innermost module whose forward was running (forward);
// else, in backward, the module whose forward created the autograd node
// being run (the last forward op with the node's sequence number ran inside
// it, or, made outside every module, inside a scope: that scope's
// backward); else the innermost scope open: one torch named
// ("Optimizer.step#SGD.step") or the Python function that called the
// outermost module ("training_step (train.py:18)", where the loss is).
// Its op: the innermost op running (aten::cudnn_convolution), else the
// backward node (ConvolutionBackward0).
//
// A trace that recorded 1 in N ops (meta framework_ranges.op_sample_every,
// APPTRACER_FRAMEWORK_CONTEXT=sampled) knows most launches' ops only from
// other steps: a kernel launch of a steady step is the launch at the same
// place in every other step (the same kernel, as many launches before it
// on its thread in its step), so one whose op was not recorded takes the
// innermost (shortest) op recorded at its place in any step, and in backward
// its module (framework_context_sampled.cpp). A backward node's module needs
// the forward op that made it, rarely recorded in the same step: the
// autograd sequence numbers a steady step uses grow by the same count each
// step, so the op that made node s made node s + that count a step later
// (an op that makes no node carries the next node's number: where two
// modules' ops hold one, the op the node's type names made it). A launch
// the steps leave without an op (work that runs in few steps, or outside
// them) takes the op recorded at its place in another call of the module or
// scope around it: its count among the launches since that range began, and
// its kernel.
// Autograd's engine also launches work between nodes (a gradient summed down
// to a broadcast input's shape or cast back to its type, gradients added up
// for an input): a launch no step saw inside a node is the backward of the
// module whose node ran just before it on its thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/trace/packed_rows.h"

namespace apptracer::trace {

class Trace;
struct PlacedLaunch;

enum class ModulePhase : uint8_t { None, Forward, Backward, Scope };
// "", "forward", "backward", "scope".
std::string_view to_string(ModulePhase phase);
// How findings and tables name a module: "layer1.0 (backward)", the name
// alone where the phase is none.
std::string module_label(std::string_view module, ModulePhase phase);

struct FrameworkContext {
  int64_t module_id = 0;  // strings.id of the module's path (or scope's name); 0: none
  int64_t op_id = 0;      // strings.id of the op's name; 0: none
  int64_t op_start_ns = 0;  // when that op (or backward node) began
  int64_t op_end_ns = 0;    // when it ended; INT64_MAX: still open
  ModulePhase phase = ModulePhase::None;
};

// Whether the trace has any framework range, without reading them: for a
// command that only needs to know (making FrameworkContexts of a sampled
// training trace fills a million launches).
bool has_framework_ranges(Trace& trace);

class FrameworkContexts {
 public:
  // Reads framework_ranges and the calls' threads; a trace without
  // framework ranges attributes nothing.
  explicit FrameworkContexts(Trace& trace);

  // Whether the trace has any framework range.
  bool recorded() const { return recorded_; }
  // 1 in how many ops the trace recorded (1: every one).
  int64_t op_sample_every() const { return op_sample_every_; }
  // How many kernel launches of a sampled trace took their op or module
  // from other steps.
  size_t from_other_steps() const { return from_other_steps_; }
  // How many kernel launches that steps left without an op took theirs
  // from other calls of the module or scope around them.
  size_t from_other_calls() const { return from_other_calls_; }

  // The context of work issued on thread `tid` of `process` at `ns` (for a
  // kernel launch of a sampled trace, `ns` its call's start, completed from
  // other steps).
  FrameworkContext issued(ProcessId process, NullableInt tid, NullableInt ns) const;
  // Of a kernel, copy or memset: where its API call was issued.
  FrameworkContext of_call(ProcessId process, NullableInt call_correlation_id) const;
  // How long thread `tid` of `process` ran inside the scopes whose name ids
  // `named` admits during [from, to): where the host did its own work (in
  // "enumerate(DataLoader)#...", loading the next batch). The scopes admitted
  // follow one another on a thread, as a loop's calls of one function do.
  int64_t time_in_scopes(ProcessId process, int64_t tid, int64_t from, int64_t to,
                         const std::function<bool(int64_t name_id)>& named) const;

 private:
  struct Range {
    int64_t start_ns;
    int64_t end_ns;  // INT64_MAX: still open at the end
    int64_t depth;
    int64_t name_id;
    int64_t seq;  // -1: none
  };
  // A thread that made a call or has ranges: its ranges of each kind, by start.
  struct Thread {
    ProcessId process;
    int64_t tid;
    std::vector<Range> modules, ops, backward, scopes;
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  static const Range* innermost(const std::vector<Range>& ranges, int64_t ns);
  // What a forward op issued at `ns` ran in: its innermost module, else
  // its innermost scope (a loss computed outside the model).
  static const Range* made_in(const Thread& ranges, int64_t ns);
  // The outermost range that ended last before `ns` (none holds it).
  static const Range* ended_before(const std::vector<Range>& ranges, int64_t ns);
  // Its position in threads_; kNone for a thread that made no call and has no range.
  uint32_t thread(ProcessId process, int64_t tid) const;
  // A trace without framework ranges: XLA's NVTX ranges, where it has them
  // (xla_range_names.h).
  void read_xla_ranges(Trace& trace, std::map<std::pair<ProcessId, int64_t>, Thread>& threads);
  bool from_xla_ = false;

  bool recorded_ = false;
  // By (process, tid): calls and launches name theirs by position.
  std::vector<Thread> threads_;
  // By node_key(process, autograd sequence number): the module whose forward
  // created the node.
  static int64_t node_key(ProcessId process, int64_t seq) { return (seq << 16) | process; }
  std::unordered_map<int64_t, int64_t> module_of_node_;
  // Every API call, by process and correlation id (then start: the outer of
  // two that share one): all of_call needs of it.
  struct Call {
    int64_t correlation_id;
    int64_t start_ns;
    uint32_t thread;
    uint32_t place = kNone;  // sampled traces: a place it launched at that names it (places_)
  };
  std::vector<Call> calls_;
  int64_t op_sample_every_ = 1;
  const Call* find_call(ProcessId process, int64_t correlation_id) const;

  // What the ranges on the thread say, nothing filled in.
  FrameworkContext recorded_at(const Thread& thread, int64_t ns) const;
  // At `ns` on `thread`: what was recorded, completed from a launch's place
  // (kNone: none).
  FrameworkContext at(uint32_t thread, int64_t ns, uint32_t place) const;

  // Sampled traces: what the steps recorded at one place of a launch
  // (framework_context_sampled.cpp).
  struct Place {
    FrameworkContext op;  // op_id 0: no step recorded an op here
    // Its op's start and end, from the launch's call's start.
    int64_t op_starts_after_ns = 0;
    int64_t op_ends_after_ns = 0;
    FrameworkContext module;  // phase None: no step recorded a module here
    bool in_node = false;     // some step recorded a backward node around it
  };
  std::vector<Place> places_;
  // Whether `place` completes `context`, recorded for a launch whose call
  // started at `start_ns`; if so, completes it.
  bool complete(const Place& place, int64_t start_ns, FrameworkContext& context) const;
  // The calls (into calls_) with a place, by thread and start: how work
  // known by its thread and time finds its launch.
  std::vector<uint32_t> placed_calls_;
  size_t from_other_steps_ = 0;
  size_t from_other_calls_ = 0;
  void fill_from_other_steps(Trace& trace);
  // Takes `own`, recorded for a launch whose call started at `start_ns`, as
  // `place`'s op where it is the first or the inner one.
  static void take_inner_op(const FrameworkContext& own, int64_t start_ns, Place& place);
  // What steps left without an op, from other calls of the module or scope
  // around it (framework_context_sampled.cpp); `launches` by thread and start.
  void fill_from_other_calls(std::vector<PlacedLaunch>& launches);
  // Sampled traces: backward nodes whose forward op was not recorded in
  // their own step get their module from the same op in another step.
  void link_nodes_by_step_period(Trace& trace);
};

}  // namespace apptracer::trace
