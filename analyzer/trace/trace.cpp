#include "analyzer/trace/trace.h"

#include <utility>

namespace apptracer::trace {

Trace::Trace(const std::string& path, TraceAccess access)
    : opened_(open_trace(path, access)), db_(&opened_), path_(path) {}

Trace::Trace(Database& db, std::string path) : db_(&db), path_(std::move(path)) {}

std::string_view Trace::string(std::optional<int64_t> id, std::string_view fallback) {
  if (id && *id < 0) {
    size_t index = static_cast<size_t>(-1 - *id);
    return index < derived_.size() ? std::string_view(derived_[index]) : fallback;
  }
  const Packed<StringRow>* found = id ? find<StringRow>(*id) : nullptr;
  return found ? text(found->text) : fallback;
}

int64_t Trace::derived_string(std::string_view text) {
  auto known = derived_ids_.find(text);
  if (known != derived_ids_.end()) return known->second;
  derived_.emplace_back(text);
  int64_t id = -static_cast<int64_t>(derived_.size());
  derived_ids_.emplace(derived_.back(), id);
  return id;
}

int64_t Trace::row_count(std::string_view table) {
  Statement count = db_->prepare("SELECT count(*) FROM \"" + std::string(table) + "\"");
  count.step();
  return count.int64(0);
}

int64_t Trace::timed_gpu_work_count(int64_t enough) {
  int64_t count = 0;
  for (const char* table : {KernelRow::kTable, MemcpyRow::kTable, MemsetRow::kTable}) {
    if (count >= enough) break;
    if (!db_->has_table(table)) continue;
    Statement rows = db_->prepare(std::string("SELECT count(*) FROM (SELECT 1 FROM \"") + table +
                                  "\" WHERE gpu_start_ns IS NOT NULL AND gpu_end_ns IS NOT NULL LIMIT ?)");
    rows.bind(1, enough - count);
    rows.step();
    count += rows.int64(0);
  }
  return count;
}

std::string Trace::meta(std::string_view key) {
  for (const Packed<MetaRow>& row : rows<MetaRow>()) {
    if (text(row.key) == key) return std::string(text(row.value));
  }
  return "";
}

const TracerTime& Trace::tracer_time() {
  if (!tracer_time_) tracer_time_ = TracerTime::read(*this);
  return *tracer_time_;
}

const TraceProcesses& Trace::processes() {
  if (!processes_) processes_ = read_processes(*this);
  return *processes_;
}

const TraceProcess& Trace::process(int64_t process_id) {
  if (const TraceProcess* found = processes().find(process_id)) return *found;
  throw TraceError(path_ + ": a row of process " + std::to_string(process_id) +
                   ", which the trace does not list; is it damaged?");
}

const TimeOrigin& Trace::origin() {
  if (!origin_) origin_ = time_origin(processes());
  return *origin_;
}

const UmTrace& Trace::unified_memory() {
  if (!unified_memory_) unified_memory_ = read_um_trace(*this);
  return *unified_memory_;
}

const KernelArguments& Trace::kernel_arguments() {
  if (!kernel_arguments_) kernel_arguments_.emplace(*this);
  return *kernel_arguments_;
}

const FrameworkContexts& Trace::framework_contexts() {
  if (!framework_contexts_) framework_contexts_.emplace(*this);
  return *framework_contexts_;
}

const TraceSteps& Trace::steps() {
  if (!steps_) steps_ = find_steps(*this);
  return *steps_;
}

const TraceOperations& Trace::operations() {
  if (!operations_) operations_.emplace(*this);
  return *operations_;
}

void Trace::limit_to_steps(const StepSelection& selection) {
  window_.emplace(steps(), selection, path_);
  // Its views point into rows the window drops; its calls hold no row.
  std::optional<TraceOperations::Calls> calls = operations_ ? operations_->release_calls() : std::nullopt;
  operations_.reset();
  // Contexts already made from the whole trace are kept: framework ranges
  // are not limited, so they name the window's launches as contexts made
  // from its calls would (a sampled trace's from more steps), and making
  // them again took a second of diagnose's 11 at a million launches.
#define APPTRACER_TABLE(sql_name, RowType, table_role, doc)                      \
  if (std::optional<Rows<RowType>>& slot = static_cast<detail::TableSlot<RowType>&>(tables_).rows) { \
    keep_window(*slot);                                                          \
  }
#include "apptracer/tables.def"
  if (calls) operations_.emplace(*this).keep_calls(std::move(*calls), *window_);
}

void Trace::release_rows() {
  operations_.reset();
  kernel_arguments_.reset();
  unified_memory_.reset();
  framework_contexts_.reset();
  tables_ = detail::TableSlots{};
}

}  // namespace apptracer::trace
