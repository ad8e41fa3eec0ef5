#include "analyzer/diff/trace_comparison.h"

#include <optional>

#include "analyzer/trace/trace.h"
#include "analyzer/trace/trace_file.h"
#include "analyzer/diff/device_labels.h"
#include "analyzer/diff/dvdg_profile.h"
#include "analyzer/diff/framework_profile.h"
#include "analyzer/diff/nvtx_profile.h"
#include "analyzer/diff/operations_profile.h"
#include "analyzer/diff/profile_diff.h"
#include "analyzer/diff/step_profile.h"

namespace apptracer::diff {

namespace {

// One trace, opened and read where an error names it.
class Input {
 public:
  // What `work` returns; an error on the way is a TraceError naming the trace.
  template <typename Work>
  auto read(Work&& work) {
    decltype(work()) result{};
    reading_trace(path_, [&] {
      result = work();
      return 0;
    });
    return result;
  }

  explicit Input(const std::string& path) : path_(path) {
    read([&] { return &trace_.emplace(path, TraceAccess::ReadOnly); });
  }
  trace::Trace& trace() { return *trace_; }

 private:
  std::string path_;
  std::optional<trace::Trace> trace_;
};

}  // namespace

TraceComparison compare_traces(const std::string& a_path, const std::string& b_path,
                               const ComparisonOptions& options) {
  Input a(a_path), b(b_path);
  TraceComparison comparison;
  ComparedDevices devices = compare_devices(a.read([&] { return devices_used(a.trace()); }),
                                            b.read([&] { return devices_used(b.trace()); }));
  // Both traces' profiles of one kind, compared.
  auto compare = [&](const char* name, const std::vector<std::string>& impacts, auto&& profile_a,
                     auto&& profile_b) {
    comparison.tables.push_back(diff_profiles(name, a.read(profile_a), b.read(profile_b), impacts));
  };
  // GPU time first: a pinned twin's slower allocations (host time) never
  // outrank the copy time it saved.
  compare("operations", {"time_ns", "host_ns"}, [&] { return operations_profile(a.trace(), devices.a); },
          [&] { return operations_profile(b.trace(), devices.b); });
  compare("nvtx_ranges", {"time_ns"}, [&] { return nvtx_profile(a.trace()); },
          [&] { return nvtx_profile(b.trace()); });
  // Where both runs name PyTorch's modules and ops. Where one does, its
  // work would all seem to appear or disappear: a note says why there is
  // no such table instead.
  bool a_names = a.read([&] { return names_modules_and_ops(a.trace()); });
  bool b_names = b.read([&] { return names_modules_and_ops(b.trace()); });
  if (a_names && b_names) {
    compare("modules_and_ops", {"time_ns"}, [&] { return framework_profile(a.trace()); },
            [&] { return framework_profile(b.trace()); });
  } else if (a_names != b_names) {
    comparison.notes.push_back(std::string("modules and ops: only ") + (a_names ? "A" : "B") +
                               " names them (the other was recorded without framework context): not compared");
  }
  std::optional<std::string> step;
  if (!options.step.empty()) step = options.step;
  else step = a.read([&] { return step_range(a.trace(), b.trace()); });
  if (step) {
    comparison.notes.push_back("steps: NVTX range \"" + *step + "\", the Nth of A against the Nth of B");
    compare("steps", {"time_ns"}, [&] { return step_profile(a.trace(), *step); },
            [&] { return step_profile(b.trace(), *step); });
  }
  if (!devices.note.empty()) comparison.notes.push_back(devices.note);
  if (options.dvdg) {
    compare("dvdg", {"edges"}, [&] { return dvdg_profile(a.trace(), devices.a); },
            [&] { return dvdg_profile(b.trace(), devices.b); });
  }
  return comparison;
}

}  // namespace apptracer::diff
