#include "analyzer/trace/framework.h"

#include "analyzer/trace/trace.h"

namespace apptracer::trace {

bool is_xla_range_name(std::string_view name) {
  return name.substr(0, 3) == "Xla" || name.find("XlaModule") != std::string_view::npos ||
         name.substr(0, 6) == "Thunk:";
}

bool is_compiler_range_name(std::string_view name) {
  return name.substr(0, 10) == "XlaCompile" || name.substr(0, 8) == "XlaPass:";
}

void CompilerTime::add(ProcessId process, std::string_view name, int64_t start_ns, int64_t end_ns) {
  if (is_compiler_range_name(name)) by_process_[process].emplace_back(start_ns, end_ns);
}

void CompilerTime::finish() {
  for (auto& [process, ranges] : by_process_) merge_intervals(ranges);
}

bool CompilerTime::at(ProcessId process, int64_t ns) const {
  auto found = by_process_.find(process);
  return found != by_process_.end() && one_holds(found->second, ns, ns);
}

int64_t CompilerTime::covered(ProcessId process, int64_t from, int64_t to) const {
  auto found = by_process_.find(process);
  return found == by_process_.end() ? 0 : covered_ns(found->second, from, to);
}

Framework detect_framework(Trace& trace) {
  bool cupy = false;
  for (const Packed<SubAllocationRow>& row : trace.rows<SubAllocationRow>()) {
    if (row.allocator == SubAllocator::PytorchCaching) return Framework::Pytorch;
    if (row.allocator == SubAllocator::CupyPool) cupy = true;
  }
  if (cupy) return Framework::Cupy;
  for (const Packed<NvtxRangeRow>& row : trace.rows<NvtxRangeRow>()) {
    if (is_xla_range_name(trace.string(row.name_id, ""))) return Framework::Jax;
  }
  return Framework::Cpp;
}

std::set<std::pair<ProcessId, int64_t>> backward_threads(Trace& trace) {
  std::set<std::pair<ProcessId, int64_t>> threads;
  for (const Packed<ThreadRow>& thread : trace.rows<ThreadRow>()) {
    if (trace.text(thread.name).substr(0, 12) == "pt_autograd_") threads.emplace(thread.process, thread.tid);
  }
  return threads;
}

std::string_view to_string(Framework framework) {
  switch (framework) {
    case Framework::Pytorch: return "PyTorch";
    case Framework::Jax: return "JAX";
    case Framework::Cupy: return "CuPy";
    case Framework::Cpp: break;
  }
  return "C++";
}

}  // namespace apptracer::trace
