// Each rule's fix checked against each situation it fires in: the fix must
// fit what the program did (an asynchronous copy is not told to become
// asynchronous, an event wait is not told to wait on an event).
#include "diagnose_fixture.h"

namespace apptracer::diagnose {
namespace {

using A = AccessKind;

class FixText;

struct Situation {
  const char* name;
  const char* rule;
  void (*build)(FixText&);
  const char* says;      // the fix contains this
  const char* not_says;  // ... and not this ("" for nothing)
};

class FixText : public DiagnoseTest, public ::testing::WithParamInterface<Situation> {
 public:
  // The GPU runs dry at 100 us; the host spends 3 ms in `name`, then issues
  // the next kernel at 5 ms.
  void gap_in(const std::string& name) {
    int64_t d = buffer(AllocKind::Device, 4096);
    kernel("first", 10'000, 90'000, {{d, A::Write}});
    call(name, 200'000, 3'200'000);
    int64_t after = kernel("second", 5'100'000, 50'000, {{d, A::ReadWrite}});
    trace.db().exec("UPDATE api_calls SET start_ns = 5000000, end_ns = 5000300 "
                    "WHERE correlation_id = (SELECT call_correlation_id FROM kernels WHERE id = " +
                    std::to_string(after) + ")");
  }

  // A kernel, a 100 us `kind` synchronization in `name`, and the next kernel 40 us after it.
  void sync_in(SyncKind kind, const std::string& name) {
    int64_t d = buffer(AllocKind::Device, 4096);
    kernel("work", 10'000, 100'000, {{d, A::Write}});
    testing::SyncRow row;
    row.kind = kind;
    row.start_ns = 20'000;
    row.end_ns = 120'000;
    row.call_correlation_id = call(name, 20'000, 120'000);
    trace.add(row);
    kernel("work", 160'000, 100'000, {{d, A::ReadWrite}});
  }

  // A synchronous copy blocking the host 200 us, then host work before the
  // next CUDA call that could have run meanwhile.
  void sync_copy_of(CopyKind kind) {
    int64_t src = buffer(kind == CopyKind::HtoD ? AllocKind::PinnedHost : AllocKind::Device, 1 << 20);
    int64_t dst = buffer(AllocKind::Device, 1 << 20);
    copy(kind, src, dst, 1 << 20, 10'000, 200'000, MemoryKind::Pinned, /*async=*/false);
    call("cudaFree", 500'000, 510'000);
  }
};

const Situation kSituations[] = {
    {"GapInAPageableCudaMemcpyAsync", "gpu_idle_gap",
     [](FixText& t) { t.gap_in("cudaMemcpyAsync"); }, "pin the host memory cudaMemcpyAsync copies",
     "Async form"},
    {"GapInCudaMemcpy", "gpu_idle_gap", [](FixText& t) { t.gap_in("cudaMemcpy"); },
     "replace cudaMemcpy by its Async form", "pin the host memory"},
    {"GapInCudaMalloc", "gpu_idle_gap", [](FixText& t) { t.gap_in("cudaMalloc"); },
     "allocate once before the loop", "ReleaseThreshold"},
    {"GapInCudaMallocAsync", "gpu_idle_gap", [](FixText& t) { t.gap_in("cudaMallocAsync"); },
     "cudaMemPoolAttrReleaseThreshold", "or cudaMallocAsync from a pool"},
    {"GapInCudaEventSynchronize", "gpu_idle_gap",
     [](FixText& t) { t.gap_in("cudaEventSynchronize"); },
     "queue the next GPU work before cudaEventSynchronize", "wait on an event"},
    {"GapInCudaStreamSynchronize", "gpu_idle_gap",
     [](FixText& t) { t.gap_in("cudaStreamSynchronize"); }, "wait on an event for the data", ""},
    {"DeviceSynchronize", "sync_api",
     [](FixText& t) { t.sync_in(SyncKind::Device, "cudaDeviceSynchronize"); },
     "cudaEventSynchronize on an event after the producing work", ""},
    {"EventSynchronize", "sync_api",
     [](FixText& t) { t.sync_in(SyncKind::Event, "cudaEventSynchronize"); },
     "queue the next GPU work before cudaEventSynchronize", "instead of cudaEventSynchronize"},
    {"SyncCopyFromTheHost", "sync_copy", [](FixText& t) { t.sync_copy_of(CopyKind::HtoD); },
     "cudaMemcpyAsync on a stream with pinned host memory", ""},
    {"SyncCopyOnTheDevice", "sync_copy", [](FixText& t) { t.sync_copy_of(CopyKind::DtoD); },
     "cudaMemcpyAsync on a stream and synchronize", "pinned"},
    {"ChurnOfDeviceMemory", "allocation_churn", [](FixText& t) { t.churn(AllocKind::Device); },
     "allocate once outside the loop", "ReleaseThreshold"},
    {"ChurnOfPinnedMemory", "allocation_churn",
     [](FixText& t) { t.churn(AllocKind::PinnedHost); }, "pin the host buffer once", ""},
    {"ChurnOfAPool", "allocation_churn", [](FixText& t) { t.churn(AllocKind::Pool); },
     "cudaMemPoolAttrReleaseThreshold", "or cudaMallocAsync"},
    {"ChurnOfManagedMemory", "allocation_churn",
     [](FixText& t) { t.churn(AllocKind::Managed); }, "managed buffer once", "cudaMallocAsync"},
};

TEST_P(FixText, FitsTheSituation) {
  const Situation& situation = GetParam();
  situation.build(*this);
  auto found = findings(situation.rule);
  ASSERT_EQ(found.size(), 1u) << situation.rule;
  EXPECT_NE(found[0].fix.find(situation.says), std::string::npos) << found[0].fix;
  if (*situation.not_says)
    EXPECT_EQ(found[0].fix.find(situation.not_says), std::string::npos) << found[0].fix;
}

INSTANTIATE_TEST_SUITE_P(EachRule, FixText, ::testing::ValuesIn(kSituations),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace apptracer::diagnose
