#include "analyzer/diagnose/trace_facts.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>

#include "analyzer/dvdg/graph_builder.h"
#include "analyzer/dvdg/labels.h"
#include "analyzer/model/median.h"

namespace apptracer::diagnose {

namespace {

class Reader {
 public:
  Reader(trace::Trace& trace, TraceFacts& facts) : trace_(trace), facts_(facts) {}

  // With `whole_run`, its graph and memory model are the facts', the memory
  // model's devices limited to the trace's window.
  void read(Progress* progress, WholeRunModels* whole_run) {
    show_phase(progress, "reading the trace");
    // Made before the rows below, which the rules read them beside: their
    // build holds every launch a moment (45 MB at a million launches), and
    // made at the first rule's call, with those rows held, that set the peak.
    if (trace::has_framework_ranges(trace_)) trace_.framework_contexts();
    const trace::TraceOperations& ops = trace_.operations();
    facts_.operations = &ops;
    read_framework_blocks(whole_run);
    facts_.communication_calls = memory::CommunicationCalls(trace_);
    facts_.compiler_ranges = memory::CompilerRanges(trace_);
    facts_.origin = trace_.origin();
    if (const trace::StepWindow* window = trace_.window()) facts_.step_window = window->describe();
    ops.steps();
    facts_.framework = whole_run ? whole_run->framework : trace::detect_framework(trace_);
    facts_.framework_context = trace::has_framework_ranges(trace_);
    facts_.backward_threads = trace::backward_threads(trace_);
    facts_.tracing_level = model::tracing_level_of(trace_.meta("options"));
    facts_.tracer_time = trace_.tracer_time();
    facts_.um = trace_.unified_memory();
    facts_.um_migrations_not_recorded = uses_managed_memory() && migrations_not_asked_for();
    // The tensor blocks' rows (186 MB at 1.46M blocks) go once the graph's
    // locations and the memory model's items hold what they say: no rule
    // reads them (read again if asked for).
    memory::MemoryItems memory_items;
    if (!whole_run) memory_items = memory::read_memory_items(trace_);
    facts_.graph = whole_run ? std::move(whole_run->graph)
                             : dvdg::build_graph_from_trace(trace_, dvdg::KernelAccesses::Exact, progress,
                                                            dvdg::TraceRowsAfter::AllButBlocks);
    facts_.kernel_arguments = &trace_.kernel_arguments();
    facts_.exact = trace::ExactAccesses::read(trace_);
    show_phase(progress, "memory");
    if (whole_run) {
      facts_.memory_model = std::move(whole_run->memory_model);
      memory::limit_to_window(facts_.memory_model, trace_);
    } else {
      facts_.memory_model = memory::build_memory_model(trace_, facts_.graph, std::move(memory_items));
    }
    // The span reads the host calls (90 MB at a million calls): made once
    // the graph and the memory model, which read none, are built.
    ops.span();
    facts_.producers = std::make_shared<memory::Producers>(trace_);
    facts_.stragglers = ranks::find_stragglers(trace_, ranks::kStragglerMinLateNs).late;
  }

 private:
  bool uses_managed_memory() const {
    const std::vector<Allocation>& allocations = facts_.ops().allocations();
    return std::any_of(allocations.begin(), allocations.end(),
                       [](const Allocation& a) { return a.kind() == AllocKind::Managed; });
  }

  // meta um_counters: "enabled: ...; unsupported: ...; not asked for: bytes HtoD, ...".
  bool migrations_not_asked_for() {
    std::string counters = trace_.meta("um_counters");
    size_t not_asked = counters.find("not asked for:");
    return not_asked != std::string::npos &&
           counters.find(to_string(UmCounterKind::BytesHtoD), not_asked) != std::string::npos;
  }

  // An allocation holds framework blocks when any block's bytes overlap it.
  void read_framework_blocks(WholeRunModels* whole_run) {
    facts_.framework_segments =
        whole_run ? std::move(whole_run->framework_segments) : memory::FrameworkSegments(trace_);
    const std::vector<Allocation>& allocations = facts_.ops().allocations();
    facts_.holds_framework_blocks.reserve(allocations.size());
    for (const Allocation& alloc : allocations) {
      facts_.holds_framework_blocks.push_back(
          facts_.framework_segments.holder(alloc.process(), alloc.address(), alloc.bytes()).has_value());
    }
  }

  trace::Trace& trace_;
  TraceFacts& facts_;
};

}  // namespace

bool TraceFacts::inside_communication_call(NullableInt correlation) const {
  const HostCall* made = ops().call(correlation);
  return made && communication_calls.contains(made->tid(), made->start_ns(), made->end_ns());
}

bool TraceFacts::library_memory(const Allocation& alloc) const {
  const std::vector<Allocation>& all = ops().allocations();
  auto at = std::lower_bound(all.begin(), all.end(), alloc.id(),
                             [](const Allocation& a, int64_t id) { return a.id() < id; });
  bool holds_blocks = at != all.end() && at->id() == alloc.id() && holds_framework_blocks[at - all.begin()];
  const HostCall* made = ops().call(alloc.alloc_correlation());
  bool compiling = made && compiler_ranges.contains(made->tid(), made->start_ns(), made->end_ns());
  return memory::library_owner(alloc.kind(), inside_communication_call(alloc.alloc_correlation()), compiling,
                               framework_segments.framework_process(alloc.process()), holds_blocks)
      .has_value();
}

bool TraceFacts::library_transfer(const Transfer& transfer) const {
  if (inside_communication_call(transfer.correlation())) return true;
  for (NullableInt id : {transfer.src_alloc(), transfer.dst_alloc()}) {
    const Allocation* alloc = ops().allocation(id);
    if (alloc && library_memory(*alloc)) return true;
  }
  return false;
}

std::unordered_map<int64_t, Intervals> TraceFacts::busy_within(int64_t from, int64_t to) const {
  // Counted first and held at their count: grown by doubling, a million
  // kernels' intervals took up to three times their room while the last
  // doubling copied them, at the top of the report's peak.
  std::unordered_map<int64_t, size_t> counts;
  auto each = [&](auto&& visit) {
    auto add = [&](NullableInt device, NullableInt start, NullableInt end) {
      if (!start || !end || *end < *start || *end < from || *start > to) return;
      visit(device.value_or(0), std::max(*start, from), std::min(*end, to));
    };
    for (const Kernel& k : ops().kernels()) add(k.row->device, k.row->gpu_start_ns, k.row->gpu_end_ns);
    for (const Transfer& t : ops().copies()) add(t.device(), t.gpu_start_ns(), t.gpu_end_ns());
    for (const Transfer& t : ops().memsets()) add(t.device(), t.gpu_start_ns(), t.gpu_end_ns());
  };
  each([&](int64_t device, int64_t, int64_t) { ++counts[device]; });
  std::unordered_map<int64_t, Intervals> busy;
  for (const auto& [device, count] : counts) busy[device].reserve(count);
  each([&](int64_t device, int64_t start, int64_t end) { busy[device].emplace_back(start, end); });
  for (auto& [device, intervals] : busy) merge_intervals(intervals);
  return busy;
}

const std::unordered_map<int64_t, Intervals>& TraceFacts::busy_by_device() const {
  if (!busy_by_device_made) busy_by_device_made = busy_within(INT64_MIN, INT64_MAX);
  return *busy_by_device_made;
}

const Intervals& TraceFacts::busy_on(int64_t device) const {
  static const Intervals kNone;
  const std::unordered_map<int64_t, Intervals>& busy = busy_by_device();
  auto found = busy.find(device);
  return found == busy.end() ? kNone : found->second;
}

int64_t TraceFacts::step_count() const {
  std::unordered_map<int64_t, int64_t> per_process;
  int64_t most = 0;
  for (const StepSpan& step : ops().steps()) most = std::max(most, ++per_process[step.process]);
  return most;
}

int64_t TraceFacts::median_step_ns() const {
  std::vector<int64_t> lengths;
  for (const StepSpan& step : ops().steps()) lengths.push_back(elapsed_ns(step.start_ns, step.end_ns));
  return model::middle_value(std::move(lengths));
}

int64_t TraceFacts::run_ns() const {
  Intervals spans;
  for (const auto& [process, span] : ops().span().processes) spans.push_back(span);
  merge_intervals(spans);
  return covered_ns(spans, INT64_MIN, INT64_MAX);
}

int64_t TraceFacts::process_end_ns(int64_t process) const {
  const auto& processes = ops().span().processes;
  auto found = processes.find(process);
  return found == processes.end() ? end_ns() : found->second.second;
}

bool TraceFacts::within_startup(int64_t process, int64_t ns) const {
  const std::vector<trace::StartUp>& startups = ops().startups();
  return std::any_of(startups.begin(), startups.end(),
                     [&](const trace::StartUp& s) { return s.process == process && ns <= s.end_ns; });
}

bool TraceFacts::optimizer_fused() const {
  if (optimizer_fused_made) return *optimizer_fused_made;
  optimizer_fused_made = false;
  // A kernel's name is a view of the trace's one copy of it: each name is
  // looked at once however often it was launched.
  std::unordered_set<const char*> seen;
  for (const Kernel& k : ops().kernels()) {
    if (!seen.insert(k.name.data()).second) continue;
    if (k.name.find("Fused") != std::string_view::npos && k.name.find("MathFunctor") != std::string_view::npos) {
      optimizer_fused_made = true;
      break;
    }
  }
  return *optimizer_fused_made;
}

const trace::CompilerTime& TraceFacts::compiler_time() const {
  if (!compiler_time_made) {
    compiler_time_made.emplace();
    for (const NvtxRange& r : ops().nvtx()) compiler_time_made->add(r.row->process, r.name, r.start_ns(), r.end_ns());
    compiler_time_made->finish();
  }
  return *compiler_time_made;
}

bool TraceFacts::compiling(int64_t process, int64_t ns) const {
  return compiler_time().at(static_cast<trace::ProcessId>(process), ns);
}

int64_t TraceFacts::compiled_ns(int64_t process, int64_t from, int64_t to) const {
  return compiler_time().covered(static_cast<trace::ProcessId>(process), from, to);
}

TraceFacts read_trace_facts(trace::Trace& trace, Progress* progress) {
  TraceFacts facts;
  Reader(trace, facts).read(progress, nullptr);
  return facts;
}

TraceFacts read_window_facts(trace::Trace& trace, WholeRunModels&& whole_run, Progress* progress) {
  TraceFacts facts;
  Reader(trace, facts).read(progress, &whole_run);
  return facts;
}

std::string transfer_name(const Transfer& transfer) {
  if (transfer.is_memset()) return "memset of " + dvdg::format_bytes(transfer.bytes());
  return std::string(to_string(transfer.kind())) + " copy of " + dvdg::format_bytes(transfer.bytes());
}

std::string allocation_name(const TraceFacts& facts, NullableInt alloc_id) {
  const Allocation* found = facts.ops().allocation(alloc_id);
  if (!found) return "memory in no known allocation";
  std::string name = "alloc #" + std::to_string(found->id()) + " (" +
                     std::string(to_string(found->kind())) + ", " +
                     dvdg::format_bytes(found->bytes());
  if (found->device()) name += ", device " + std::to_string(*found->device());
  return name + ")";
}

std::string format_ns(int64_t ns) {
  char text[32];
  double value = static_cast<double>(ns);
  if (ns >= 1'000'000'000) {
    std::snprintf(text, sizeof text, "%.2f s", value / 1e9);
  } else if (ns >= 1'000'000) {
    std::snprintf(text, sizeof text, "%.2f ms", value / 1e6);
  } else if (ns >= 1'000) {
    std::snprintf(text, sizeof text, "%.1f us", value / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%" PRId64 " ns", ns);
  }
  return text;
}

}  // namespace apptracer::diagnose
