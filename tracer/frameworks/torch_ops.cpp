#include "frameworks/torch_ops.h"

#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "apptracer/records.h"
#include "apptracer/schema.h"
#include "base/log.h"
#include "frameworks/framework_ranges.h"
#include "frameworks/sub_allocation_events.h"

namespace apptracer::frameworks {

namespace {

// at::RecordScope values: stable since torch 1.10.
constexpr size_t kScopeFunction = 0;
constexpr size_t kScopeBackwardFunction = 1;
constexpr size_t kScopeUserScope = 7;
constexpr size_t kScopeCount = 10;

// What the start callback returns: a std::unique_ptr<at::ObserverContext>,
// always empty. A unique_ptr with the default deleter has one ABI whatever it
// points to.
struct NoContext {
  virtual ~NoContext() = default;
};
using StartCallback = std::unique_ptr<NoContext> (*)(const void* record_function);
using EndCallback = void (*)(const void* record_function, void* context);

// at::RecordFunctionCallback's layout (unchanged since torch 1.10): passed by
// value, so it must be trivially copyable with the same size.
struct TorchCallback {
  StartCallback start;
  EndCallback end;
  double sampling_probability;
  std::array<bool, kScopeCount> scopes;
  bool needs_inputs;
  bool needs_outputs;
  bool needs_ids;
};
static_assert(std::is_trivially_copyable_v<TorchCallback>);
static_assert(sizeof(TorchCallback) == 40);

constexpr const char* kTorchLibrary = "libtorch_cpu.so";
constexpr const char* kAddGlobalCallback = "_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE";
constexpr const char* kRemoveCallback = "_ZN2at14removeCallbackEm";
constexpr const char* kRecordFunctionName = "_ZNK2at14RecordFunction4nameEv";

// Torch versions whose RecordFunction layout is known: the prefix of
// torch.__version__ and the byte offset of sequence_nr_ (measured with
// offsetof against each version's headers; test_apps/torch_allocator_layout.py
// re-derives it).
struct KnownVersion {
  const char* prefix;
  long sequence_nr_offset;
};
constexpr KnownVersion kKnownVersions[] = {{"2.11.", 200}, {"2.15.", 200}};

using NameFunction = const char* (*)(const void* record_function);
NameFunction record_function_name = nullptr;
long sequence_nr_offset = -1;

int64_t sequence_nr(const void* record_function) {
  int64_t seq;
  std::memcpy(&seq, static_cast<const char*>(record_function) + sequence_nr_offset, sizeof seq);
  return seq;
}

uint32_t name_of(const void* record_function) {
  const char* name = record_function_name(record_function);
  return range_name(name ? name : "");
}

// Called by torch on the thread running the op, before and after it. The
// name and sequence number are read at the end, and only the name of a range
// that is recorded is interned.
template <FrameworkRangeKind kind>
std::unique_ptr<NoContext> on_start(const void*) {
  open_range(kind);
  return nullptr;
}

template <FrameworkRangeKind kind>
void on_end(const void* record_function, void*) {
  int64_t seq = sequence_nr(record_function);
  // A forward op that made an autograd node is kept: its backward's launches
  // are attributed to the module through it.
  close_range(seq, kind == FrameworkRangeKind::Op && seq >= 0, &name_of, record_function);
}

// torch runs a callback whose probability is below 1 for that share of the
// calls, drawn by a countdown: the others pay no callback path at all.
template <FrameworkRangeKind kind>
TorchCallback callback_for(size_t scope, double probability, EndCallback end = &on_end<kind>) {
  TorchCallback callback{&on_start<kind>, end, probability, {}, false, false, false};
  callback.scopes[scope] = true;
  return callback;
}

std::atomic<bool> attached{false};

using AddGlobalCallback = uint64_t (*)(TorchCallback callback);
using RemoveCallback = void (*)(uint64_t handle);
AddGlobalCallback add_callback = nullptr;
RemoveCallback remove_callback = nullptr;

// Sampled ops begin with every op and node recorded, by callbacks of
// probability 1 that count down the ops left before sampling; the op that
// ends the count swaps them for the sampled ones. That happens once, on the
// op's own thread: torch's callback lists are copied per RecordFunction and
// its registry takes its own lock, so a callback may change them. The count
// holds one more, which attach gives up once the handles are stored: ops
// that end first can't reach zero before the handles are there to remove.
std::atomic<int64_t> whole_ops_left{0};
std::array<uint64_t, 2> whole_callbacks{};
double sampled_probability = 1.0;

void add_sampled_callbacks() {
  add_callback(callback_for<FrameworkRangeKind::Op>(kScopeFunction, sampled_probability));
  add_callback(callback_for<FrameworkRangeKind::Backward>(kScopeBackwardFunction, sampled_probability));
}

void begin_sampling() {
  try {
    // Removed first: an op that both ran would be recorded twice.
    for (uint64_t handle : whole_callbacks) remove_callback(handle);
    add_sampled_callbacks();
  } catch (...) {
    log_warn("PyTorch ops: torch refused to begin sampling ops; later ops may go unrecorded");
  }
}

template <FrameworkRangeKind kind>
void on_end_counted(const void* record_function, void* context) {
  on_end<kind>(record_function, context);
  if (whole_ops_left.fetch_sub(1, std::memory_order_acq_rel) == 1) begin_sampling();
}

void report(OpsAttachStatus status, const std::string& what) {
  if (status == OpsAttachStatus::Attached) {
    log_debug("PyTorch ops: {}", what);
  } else {
    log_info("PyTorch ops: {}; launches are attributed to modules only, not to aten ops", what);
  }
  set_meta("framework_ranges.ops", what);
}

}  // namespace

long torch_sequence_nr_offset(const std::string& torch_version) {
  for (const KnownVersion& known : kKnownVersions) {
    if (torch_version.rfind(known.prefix, 0) == 0) return known.sequence_nr_offset;
  }
  return -1;
}

OpsAttachStatus attach_torch_ops(const std::string& torch_version) {
  if (!ranges_recording()) return OpsAttachStatus::NotRecording;
  if (attached.load()) return OpsAttachStatus::AlreadyAttached;
  long offset = torch_sequence_nr_offset(torch_version);
  if (offset < 0) {
    report(OpsAttachStatus::UnknownVersion,
           "not attached: torch " + torch_version + " is not a version apptracer knows");
    return OpsAttachStatus::UnknownVersion;
  }
  void* library = dlopen(kTorchLibrary, RTLD_NOW | RTLD_NOLOAD);
  auto add = library ? reinterpret_cast<AddGlobalCallback>(dlsym(library, kAddGlobalCallback))
                     : nullptr;
  auto remove = library ? reinterpret_cast<RemoveCallback>(dlsym(library, kRemoveCallback))
                        : nullptr;
  auto name = library ? reinterpret_cast<NameFunction>(dlsym(library, kRecordFunctionName))
                      : nullptr;
  if (!add || !remove || !name) {
    report(OpsAttachStatus::NoTorch, "not attached: no RecordFunction callbacks in libtorch_cpu.so");
    return OpsAttachStatus::NoTorch;
  }
  // Once only: the callbacks stay for the life of the process.
  if (attached.exchange(true)) return OpsAttachStatus::AlreadyAttached;
  record_function_name = name;
  sequence_nr_offset = offset;
  add_callback = add;
  remove_callback = remove;
  // Named scopes (the optimizer's step) are few: every one is recorded.
  uint32_t every = recording_sink().op_sample_every;
  uint32_t whole_first = every > 1 ? recording_sink().op_sample_after : 0;
  sampled_probability = 1.0 / every;
  try {
    add(callback_for<FrameworkRangeKind::Scope>(kScopeUserScope, 1.0));
    if (whole_first > 0) {
      whole_ops_left.store(int64_t{whole_first} + 1);
      whole_callbacks = {
          add(callback_for<FrameworkRangeKind::Op>(kScopeFunction, 1.0,
                                                   &on_end_counted<FrameworkRangeKind::Op>)),
          add(callback_for<FrameworkRangeKind::Backward>(
              kScopeBackwardFunction, 1.0, &on_end_counted<FrameworkRangeKind::Backward>))};
      if (whole_ops_left.fetch_sub(1, std::memory_order_acq_rel) == 1) begin_sampling();
    } else {
      add_sampled_callbacks();
    }
  } catch (...) {
    report(OpsAttachStatus::Failed, "not attached: torch refused the RecordFunction callbacks");
    return OpsAttachStatus::Failed;
  }
  std::string sampling =
      every == 1 ? ""
                 : ", 1 in " + std::to_string(every) + " ops" +
                       (whole_first > 0 ? " after the first " + std::to_string(whole_first) : "");
  report(OpsAttachStatus::Attached, "attached (torch " + torch_version + ")" + sampling);
  // The analyzer names the others' ops from the steps where they were recorded.
  if (every > 1) set_meta(kMetaOpSampleEvery, std::to_string(every));
  return OpsAttachStatus::Attached;
}

}  // namespace apptracer::frameworks
