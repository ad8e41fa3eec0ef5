#include "analyzer/trace/time_origin.h"

#include <algorithm>

namespace apptracer::trace {

std::string TimeOrigin::describe() const {
  if (!recorded) return "times on the trace's clock (the trace records no start)";
  return "times since the trace's start (meta start_ns " + std::to_string(ns) + ")";
}

TimeOrigin time_origin(const TraceProcesses& processes) {
  TimeOrigin origin;
  for (const TraceProcess& process : processes.list) {
    if (!process.start_ns) continue;
    origin.ns = origin.recorded ? std::min(origin.ns, *process.start_ns) : *process.start_ns;
    origin.recorded = true;
  }
  return origin;
}

}  // namespace apptracer::trace
