// A stand-in for libapptracer.so's recording, for the Python test of the
// framework hooks on a machine without a GPU (where the tracer does not
// record): the real framework entry points are linked in, and record into
// buffers this library drains as text.
#include <cstdio>
#include <cstring>
#include <string>

#include "base/config.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "frameworks/sub_allocation_events.h"

namespace {

apptracer::RecordBuffers& buffers() {
  // Room for every range a test or benchmark records between two takes.
  static auto* instance = new apptracer::RecordBuffers(size_t{1} << 30);
  return *instance;
}
apptracer::StringTable& strings() {
  static auto* instance = new apptracer::StringTable;
  return *instance;
}
std::string& pending() {
  static auto* text = new std::string;
  return *text;
}
uint64_t clock_ns() {
  static uint64_t now = 0;
  return ++now;
}

const char* kind_name(apptracer::FrameworkRangeKind kind) {
  switch (kind) {
    case apptracer::FrameworkRangeKind::Module: return "module";
    case apptracer::FrameworkRangeKind::Op: return "op";
    case apptracer::FrameworkRangeKind::Backward: return "backward";
    case apptracer::FrameworkRangeKind::Scope: return "scope";
  }
  return "?";
}

}  // namespace

// Framework ranges are recorded from now on, as the tracer's configuration
// from the environment says (APPTRACER_FRAMEWORK_CONTEXT=all: every one of
// them; =sampled, the default: 1 in APPTRACER_OP_SAMPLE_EVERY ops).
extern "C" __attribute__((visibility("default"))) void framework_probe_start() {
  apptracer::Config config = apptracer::Config::from_environment();
  apptracer::frameworks::start_recording({&buffers(), clock_ns, nullptr, &strings(),
                                          config.every_framework_range, config.op_sample_every,
                                          config.op_sample_after, config.framework_context});
}

// Work the calling thread records, as a launch would be (an empty record).
extern "C" __attribute__((visibility("default"))) void framework_probe_work() {
  apptracer::Record r{};
  r.type = apptracer::RecordType::Kernel;
  buffers().append(r);
}

// The ranges recorded since the last take, one line each, in the order they
// ended: "TID KIND START END DEPTH SEQ NAME"; returns the text's length.
extern "C" __attribute__((visibility("default"))) size_t framework_probe_pending() {
  buffers().drain([&](const apptracer::Record* records, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      const apptracer::Record& r = records[i];
      if (r.type != apptracer::RecordType::FrameworkRange) continue;
      const apptracer::FrameworkRangeRecord& f = r.framework_range;
      pending() += std::to_string(r.tid) + " " + kind_name(f.kind) + " " +
                   std::to_string(f.start_ns) + " " + std::to_string(f.end_ns) + " " +
                   std::to_string(f.depth) + " " + std::to_string(f.seq) + " " +
                   strings().text(f.name_id) + "\n";
    }
  });
  return pending().size();
}

// Copies the pending text into `out` (framework_probe_pending() bytes; null
// drops it) and empties it.
extern "C" __attribute__((visibility("default"))) void framework_probe_take(char* out) {
  if (out) std::memcpy(out, pending().data(), pending().size());
  pending().clear();
}
