// The folder Holistic Trace Analysis reads (`TraceAnalysis(trace_dir=DIR)`):
// one Chrome JSON file per rank, named rankR.json, each with the rank HTA
// finds in it (its "distributedInfo"). A trace of one process is one rank; a
// merged trace is one file per process. A process's rank is its rank in its
// largest communicator when every process held a different one; otherwise
// the processes are ranks 0, 1, ... in the trace's order. Times are whole
// microseconds, rounded to the nearest (ChromeJsonTimes): HTA would round
// nanosecond decimals itself, every start up and every end down.
#pragma once

#include <string>
#include <vector>

#include "analyzer/progress.h"
#include "analyzer/timeline/timeline.h"
#include "analyzer/trace/trace.h"

namespace apptracer {

struct HtaFolder {
  std::vector<std::string> files;  // as written, by process
  bool ranks_by_order = false;     // the processes' ranks are their order, not communicator ranks
  TimelineCounts counts;
};

// Writes the folder `directory` (made when missing) for the trace at
// `trace_path`. A file that exists is replaced only with `force`; another
// trace file in the folder (.json, .gz), which HTA would read as a rank
// too, is refused. Throws std::runtime_error with one line.
HtaFolder write_hta_folder(trace::Trace& trace, const std::string& trace_path,
                           const std::string& directory, bool force, Progress& progress,
                           const TimelineContent& content);

}  // namespace apptracer
