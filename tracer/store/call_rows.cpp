#include "store/call_rows.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "store/row_values.h"

namespace apptracer {

int64_t ApiCallRows::name_id(const char* name) {
  auto& id = name_ids_[name];
  if (id == 0) id = strings_.intern(name ? name : "?");
  return id;
}

void ApiCallRows::write(const Record& r) {
  const ApiCallRecord& a = r.api;
  ApiCallRow row;
  row.correlation_id = r.own_correlation_id;
  row.parent_correlation_id = optional_nonzero(a.parent_correlation_id);
  row.domain = a.domain;
  row.cbid = a.cbid;
  row.name_id = name_id(a.name);
  row.tid = r.tid;
  row.start_ns = as_int(a.start_ns);
  row.end_ns = as_int(a.end_ns);
  row.return_code = a.return_code;
  row.device = optional_device(a.device);
  row.stream = optional_stream(a.stream);
  if (a.driver_name) row.driver_name_id = name_id(a.driver_name);
  rows_.add(row);
}

bool is_graph_launch(const ApiCallRecord& a) {
  if (a.domain == ApiDomain::Driver) {
    return a.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
           a.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
  }
  return a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
         a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
}

SyncRow sync_row(const Record& r) {
  const SyncRecord& s = r.sync;
  SyncRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.kind = s.kind;
  row.device = optional_device(s.device);
  row.stream = optional_stream(s.stream);
  row.event_handle = optional_nonzero(s.event_handle);
  row.tid = r.tid;
  row.start_ns = as_int(s.start_ns);
  row.end_ns = as_int(s.end_ns);
  return row;
}

NcclGroupRow nccl_group_row(const Record& r) {
  const NcclGroupRecord& g = r.nccl_group;
  NcclGroupRow row;
  row.group_id = g.group;
  row.tid = r.tid;
  row.start_ns = as_int(g.start_ns);
  row.end_ns = as_int(g.end_ns);
  return row;
}

StreamEventRow stream_event_row(const Record& r) {
  const StreamEventRecord& e = r.stream_event;
  StreamEventRow row;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  row.kind = e.kind;
  row.event_handle = as_int(e.event_handle);
  row.stream = optional_stream(e.stream);
  row.device = optional_device(e.device);
  row.ns = as_int(e.ns);
  return row;
}

StreamRow stream_row(const Record& r) {
  const StreamRecord& s = r.stream;
  StreamRow row;
  row.stream = s.stream;
  row.context_id = s.context_id;
  row.kind = s.kind;
  row.priority = s.priority;
  row.call_correlation_id = optional_nonzero(r.correlation_id);
  return row;
}

}  // namespace apptracer
