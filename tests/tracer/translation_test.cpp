// Translation of every operation kind, from fabricated CUPTI callback data:
// what each traced call must record (tracer/translate/).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "translate/copy_destination.h"
#include "translation_fixture.h"

namespace apptracer::testing {
namespace {

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name
#define DRV(name) CUPTI_DRIVER_TRACE_CBID_##name

void* ptr(uint64_t address) { return reinterpret_cast<void*>(address); }

// --- allocations -------------------------------------------------------------

TEST_F(TranslationTest, ARuntimeAllocationIsRegisteredAndRecordedOnItsDevice) {
  void* address = ptr(0x7f0000001000);
  cudaMalloc_v3020_params p{&address, 4096};
  std::vector<Record> records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMalloc_v3020), "cudaMalloc", p);
  ASSERT_EQ(records.size(), 2u);
  const Record& a = records[0];
  EXPECT_EQ(a.type, RecordType::Allocation);
  EXPECT_EQ(a.allocation.address, 0x7f0000001000u);
  EXPECT_EQ(a.allocation.bytes, 4096u);
  EXPECT_EQ(a.allocation.kind, AllocKind::Device);
  EXPECT_EQ(a.allocation.device, 1);
  ASSERT_TRUE(allocations_.find(0x7f0000001800, a.allocation.ns).has_value())
      << "registered before the call returns";
  const Record& api = records[1];
  EXPECT_EQ(api.type, RecordType::ApiCall);
  EXPECT_EQ(api.api.domain, ApiDomain::Runtime);
  EXPECT_EQ(api.api.device, 1);
  EXPECT_EQ(api.api.stream, -1) << "cudaMalloc names no stream";
  EXPECT_EQ(api.own_correlation_id, a.own_correlation_id);
}

TEST_F(TranslationTest, ANestedDriverCallDescribesTheOperationOnceAndFoldsIntoTheRuntimeCall) {
  void* runtime_out = ptr(0x7f0000002000);
  cudaMalloc_v3020_params runtime{&runtime_out, 256};
  CUdeviceptr driver_out = 0x7f0000002000;
  cuMemAlloc_v2_params driver{&driver_out, 256};
  std::vector<Record> records = nested_call(RT(cudaMalloc_v3020), "cudaMalloc", runtime,
                                            DRV(cuMemAlloc_v2), "cuMemAlloc_v2", driver);
  EXPECT_EQ(of_type(records, RecordType::Allocation).size(), 1u);
  std::vector<Record> calls = of_type(records, RecordType::ApiCall);
  ASSERT_EQ(calls.size(), 1u) << "one record for the call the program made";
  EXPECT_EQ(calls[0].api.domain, ApiDomain::Runtime);
  EXPECT_STREQ(calls[0].api.driver_name, "cuMemAlloc_v2") << "the driver call it made is named";
  EXPECT_EQ(calls[0].api.parent_correlation_id, 0u);
}

TEST_F(TranslationTest, OnlyARuntimeCallsFirstSuccessfulDriverCallIsFolded) {
  cudaStreamSynchronize_v3020_params runtime{nullptr};
  cuStreamSynchronize_params driver{nullptr};
  auto driver_call = [&](int return_code) {
    inner_call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuStreamSynchronize), "cuStreamSynchronize", driver,
               return_code);
  };
  std::vector<Record> calls = of_type(
      call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaStreamSynchronize_v3020), "cudaStreamSynchronize",
           runtime, 0, nullptr,
           [&] {
             driver_call(CUDA_ERROR_NOT_READY);
             driver_call(0);
             driver_call(0);
           }),
      RecordType::ApiCall);
  ASSERT_EQ(calls.size(), 3u) << "the failed and the second driver call keep their records";
  EXPECT_EQ(calls[0].api.domain, ApiDomain::Driver);
  EXPECT_EQ(calls[0].api.return_code, CUDA_ERROR_NOT_READY);
  EXPECT_EQ(calls[1].api.domain, ApiDomain::Driver);
  EXPECT_EQ(calls[1].api.return_code, 0);
  for (int i : {0, 1}) {
    EXPECT_EQ(calls[i].api.parent_correlation_id, calls[2].own_correlation_id)
        << "a driver call with a record names the runtime call it served";
    EXPECT_EQ(calls[i].api.driver_name, nullptr);
  }
  EXPECT_EQ(calls[2].api.domain, ApiDomain::Runtime);
  EXPECT_STREQ(calls[2].api.driver_name, "cuStreamSynchronize");
}

TEST_F(TranslationTest, ADriverCallTheProgramMadeKeepsItsRecord) {
  cuStreamSynchronize_params driver{nullptr};
  std::vector<Record> calls = of_type(
      call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuStreamSynchronize), "cuStreamSynchronize", driver),
      RecordType::ApiCall);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].api.domain, ApiDomain::Driver);
  EXPECT_EQ(calls[0].api.driver_name, nullptr);
}

TEST_F(TranslationTest, PageLockedHostAllocationsTakeTheirKindFromTheirFlags) {
  void* host = ptr(0x500000);
  cudaHostAlloc_v3020_params mapped{&host, 64, cudaHostAllocMapped};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaHostAlloc_v3020), "cudaHostAlloc", mapped);
  EXPECT_EQ(records[0].allocation.kind, AllocKind::MappedHost);
  EXPECT_EQ(records[0].allocation.device, -1) << "host memory has no device";
  EXPECT_EQ(records[0].allocation.flags, unsigned{cudaHostAllocMapped});
  void* other = ptr(0x600000);
  cuMemHostAlloc_params wc{&other, 64, CU_MEMHOSTALLOC_WRITECOMBINED};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemHostAlloc), "cuMemHostAlloc", wc);
  EXPECT_EQ(records[0].allocation.kind, AllocKind::WriteCombinedHost);
}

TEST_F(TranslationTest, FreesEndTheAllocationTheyName) {
  void* address = ptr(0x7f0000003000);
  cudaMalloc_v3020_params alloc{&address, 128};
  uint64_t id = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMalloc_v3020), "cudaMalloc", alloc)[0]
                    .allocation.alloc_id;
  cudaFree_v3020_params free{address};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaFree_v3020), "cudaFree", free);
  ASSERT_EQ(of_type(records, RecordType::Free).size(), 1u);
  EXPECT_EQ(records[0].free.alloc_id, id);
  cudaFree_v3020_params unknown{ptr(0x1234)};
  EXPECT_TRUE(of_type(call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaFree_v3020), "cudaFree", unknown),
                      RecordType::Free)
                  .empty())
      << "a free of memory we never saw records nothing";
}

TEST_F(TranslationTest, VirtualMemoryReservationsHandlesAndMappings) {
  CUdeviceptr reserved = 0x7f1000000000;
  cuMemAddressReserve_params reserve{&reserved, 1 << 21, 0, 0, 0};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemAddressReserve), "cuMemAddressReserve",
                      reserve);
  EXPECT_EQ(records[0].allocation.kind, AllocKind::VmmReserve);
  EXPECT_FALSE(allocations_.find(reserved, UINT64_MAX - 1)) << "pointers never resolve to a reservation";
  CUmemGenericAllocationHandle handle = 0x77;
  CUmemAllocationProp prop{};
  cuMemCreate_params create{&handle, 1 << 21, &prop, 0};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemCreate), "cuMemCreate", create);
  EXPECT_EQ(records[0].allocation.kind, AllocKind::VmmPhysical);
  cuMemMap_params map{reserved, 1 << 21, 0, handle, 0};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemMap), "cuMemMap", map);
  EXPECT_EQ(records[0].allocation.kind, AllocKind::VmmMapping);
  EXPECT_TRUE(allocations_.find(reserved + 100, UINT64_MAX - 1)) << "pointers resolve to mappings";
  cuMemRelease_params release{handle};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemRelease), "cuMemRelease", release);
  EXPECT_EQ(of_type(records, RecordType::Free).size(), 1u);
}

TEST_F(TranslationTest, IpcImportsAreAllocationsOfTheirOwnKindSizedByTheDriver) {
  CUdeviceptr imported = 0x7f2000000000;
  cuda_.ranges[imported] = {imported, 1 << 20};
  CUipcMemHandle handle{};
  cuIpcOpenMemHandle_v2_params open{&imported, handle, 1};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuIpcOpenMemHandle_v2), "cuIpcOpenMemHandle_v2",
                      open);
  ASSERT_EQ(of_type(records, RecordType::Allocation).size(), 1u);
  EXPECT_EQ(records[0].allocation.kind, AllocKind::IpcImport);
  EXPECT_EQ(records[0].allocation.bytes, uint64_t{1} << 20);
  EXPECT_TRUE(allocations_.find(imported + 4096, UINT64_MAX - 1));
  cuIpcCloseMemHandle_params close{imported};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuIpcCloseMemHandle), "cuIpcCloseMemHandle", close);
  EXPECT_EQ(of_type(records, RecordType::Free).size(), 1u);

  CUmemGenericAllocationHandle shared = 0x99;
  int fd = 3;
  cuMemImportFromShareableHandle_params import{&shared, &fd,
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemImportFromShareableHandle),
                 "cuMemImportFromShareableHandle", import);
  EXPECT_EQ(records[0].allocation.kind, AllocKind::ImportedHandle);
  cuMemRelease_params release{shared};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemRelease), "cuMemRelease", release);
  EXPECT_EQ(of_type(records, RecordType::Free).size(), 1u) << "released like a created handle";
}

// --- copies ----------------------------------------------------------------------

TEST_F(TranslationTest, AnAsyncCopyCarriesRawAddressesAndItsStream) {
  cudaMemcpyAsync_v3020_params p{ptr(0x7f0000004000), ptr(0x900000), 64, cudaMemcpyHostToDevice,
                                 reinterpret_cast<cudaStream_t>(0x33)};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpyAsync_v3020), "cudaMemcpyAsync", p);
  ASSERT_EQ(records.size(), 2u);
  const MemcpyRecord& m = records[0].memcpy;
  EXPECT_EQ(m.dst, 0x7f0000004000u);
  EXPECT_EQ(m.src, 0x900000u);
  EXPECT_EQ(m.bytes, 64u);
  EXPECT_EQ(m.kind, CopyKind::HtoD);
  EXPECT_TRUE(m.is_async);
  EXPECT_EQ(records[1].api.stream, 100 + 0x33) << "the api_calls row names the stream";
  EXPECT_FALSE(cuda_.last_per_thread);
  cudaMemcpyAsync_v3020_params ptsz = p;
  call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpyAsync_ptsz_v7000), "cudaMemcpyAsync_ptsz", ptsz);
  EXPECT_TRUE(cuda_.last_per_thread) << "a _ptsz call's default stream is the thread's";
}

TEST_F(TranslationTest, ASynchronousCopyIsNotAsync) {
  cudaMemcpy_v3020_params p{ptr(0x900000), ptr(0x7f0000004000), 8, cudaMemcpyDeviceToHost};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p);
  EXPECT_EQ(records[0].memcpy.kind, CopyKind::DtoH);
  EXPECT_FALSE(records[0].memcpy.is_async);
  EXPECT_EQ(records[1].api.stream, -1);
}

// A large copy that may go to the host says, as its call began, how many of
// its destination's sampled pages nothing had touched: a fresh anonymous
// mapping has none, a written one all, and a small copy is not probed.
TEST_F(TranslationTest, ALargeCopyToTheHostSaysWhetherItsDestinationWasUntouched) {
  constexpr size_t kBytes = size_t(4) << 20;
  void* fresh = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(fresh, MAP_FAILED);
  madvise(fresh, kBytes, MADV_NOHUGEPAGE);  // a write makes one page, not 512
  cudaMemcpy_v3020_params p{fresh, ptr(0x900000), kBytes, cudaMemcpyDeviceToHost};
  const MemcpyRecord untouched = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p)[0].memcpy;
  EXPECT_EQ(untouched.dst_pages_mapped, kSampledPages);
  EXPECT_EQ(untouched.dst_pages_untouched, kSampledPages);
  std::memset(fresh, 1, kBytes / 2);
  const MemcpyRecord half = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p)[0].memcpy;
  EXPECT_EQ(half.dst_pages_untouched, kSampledPages / 2);
  cuMemcpyDtoH_v2_params driver{fresh, 0x900000, kBytes};
  std::memset(fresh, 1, kBytes);
  const MemcpyRecord touched = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemcpyDtoH_v2), "cuMemcpyDtoH_v2", driver)[0].memcpy;
  EXPECT_EQ(touched.dst_pages_mapped, kSampledPages);
  EXPECT_EQ(touched.dst_pages_untouched, 0);
  p.count = kProbedCopyBytes - 1;
  const MemcpyRecord small = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p)[0].memcpy;
  EXPECT_EQ(small.dst_pages_mapped, 0) << "a small copy is not probed";
  p.count = kBytes;
  p.kind = cudaMemcpyHostToDevice;
  EXPECT_EQ(call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p)[0].memcpy.dst_pages_mapped, 0)
      << "nor one to the device";
  munmap(fresh, kBytes);
}

// A copy whose direction the driver infers is probed only where CUDA never
// allocated: a destination in a region of CUDA's memory is a device buffer
// (here host pages the registry is told are CUDA's, so a probe would see them).
TEST_F(TranslationTest, ACopyInAnInferredDirectionIsNotProbedInCudasMemory) {
  constexpr size_t kBytes = size_t(4) << 20;
  void* pages = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  std::memset(pages, 1, kBytes);
  cudaMemcpy_v3020_params p{pages, ptr(0x900000), kBytes, cudaMemcpyDefault};
  EXPECT_EQ(call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p)[0].memcpy.dst_pages_mapped,
            kSampledPages)
      << "host memory is probed";
  allocations_.add(reinterpret_cast<uintptr_t>(pages), kBytes, AllocKind::Device, 0, 1);
  EXPECT_EQ(call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p)[0].memcpy.dst_pages_mapped, 0);
  cuMemcpy_params driver{reinterpret_cast<uintptr_t>(pages), 0x900000, kBytes};
  EXPECT_EQ(call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemcpy), "cuMemcpy", driver)[0].memcpy.dst_pages_mapped, 0);
  p.kind = cudaMemcpyDeviceToHost;
  EXPECT_EQ(call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p)[0].memcpy.dst_pages_mapped,
            kSampledPages)
      << "a copy to the host is probed wherever it goes";
  munmap(pages, kBytes);
}

TEST_F(TranslationTest, DriverPitchedCopiesStartAtTheirOffsets) {
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = ptr(0x800000);
  c.srcXInBytes = 4;
  c.srcY = 2;
  c.srcPitch = 256;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = 0x7f0000010000;
  c.dstPitch = 512;
  c.WidthInBytes = 100;
  c.Height = 3;
  cuMemcpy2DAsync_v2_params p{&c, reinterpret_cast<CUstream>(0x44)};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemcpy2DAsync_v2), "cuMemcpy2DAsync_v2", p);
  const MemcpyRecord& m = records[0].memcpy;
  EXPECT_EQ(m.src, 0x800000u + 2 * 256 + 4);
  EXPECT_EQ(m.dst, 0x7f0000010000u);
  EXPECT_EQ(m.bytes, 300u);
  EXPECT_EQ(m.width, 100u);
  EXPECT_EQ(m.height, 3u);
  EXPECT_EQ(m.src_pitch, 256u);
  EXPECT_EQ(m.dst_pitch, 512u);
  EXPECT_EQ(m.kind, CopyKind::HtoD);
  EXPECT_TRUE(m.is_async);
  EXPECT_EQ(records[1].api.stream, 100 + 0x44);
}

TEST_F(TranslationTest, ARuntime3DCopyFromAnArrayHasNoSourceAddress) {
  cudaMemcpy3DParms parms{};
  parms.srcArray = reinterpret_cast<cudaArray_t>(0x1);
  parms.dstPtr = cudaPitchedPtr{ptr(0x7f0000020000), 1024, 256, 16};
  parms.dstPos = cudaPos{8, 1, 2};
  parms.extent = cudaExtent{64, 4, 2};
  parms.kind = cudaMemcpyDeviceToDevice;
  cudaMemcpy3D_v3020_params p{&parms};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy3D_v3020), "cudaMemcpy3D", p);
  const MemcpyRecord& m = records[0].memcpy;
  EXPECT_EQ(m.src, 0u);
  EXPECT_EQ(m.dst, 0x7f0000020000u + (2 * 16 + 1) * 1024 + 8);
  EXPECT_EQ(m.bytes, 64u * 8);
  EXPECT_EQ(m.height, 8u) << "rows times depth";
}

TEST_F(TranslationTest, PeerCopiesNameBothDevices) {
  cudaMemcpyPeerAsync_v4000_params p{ptr(0x7f0000030000), 1, ptr(0x7f0000040000), 0, 4096, nullptr};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpyPeerAsync_v4000), "cudaMemcpyPeerAsync", p);
  EXPECT_EQ(records[0].memcpy.kind, CopyKind::PtoP);
  EXPECT_EQ(records[0].memcpy.src_device, 0);
  EXPECT_EQ(records[0].memcpy.dst_device, 1);
  EXPECT_TRUE(records[0].memcpy.is_async);
}

TEST_F(TranslationTest, AFailedCallRecordsOnlyItself) {
  cudaMemcpy_v3020_params p{ptr(0x900000), ptr(0x7f0000004000), 8, cudaMemcpyDeviceToHost};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemcpy_v3020), "cudaMemcpy", p, 1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].type, RecordType::ApiCall);
  EXPECT_EQ(records[0].api.return_code, 1);
}

// --- memsets -------------------------------------------------------------------------

TEST_F(TranslationTest, DriverMemsetsKeepTheirElementWidthAndValue) {
  cuMemsetD16Async_params p{0x7f0000050000, 0xbeef, 10, reinterpret_cast<CUstream>(0x5)};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemsetD16Async), "cuMemsetD16Async", p);
  const MemsetRecord& s = records[0].memset;
  EXPECT_EQ(s.address, 0x7f0000050000u);
  EXPECT_EQ(s.value, 0xbeefu);
  EXPECT_EQ(s.element_size, 2);
  EXPECT_EQ(s.bytes, 20u);
  EXPECT_TRUE(s.is_async);
  EXPECT_EQ(records[1].api.stream, 100 + 5);
  cuMemsetD2D32_v2_params two_d{0x7f0000060000, 1024, 7, 16, 4};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemsetD2D32_v2), "cuMemsetD2D32_v2", two_d);
  EXPECT_EQ(records[0].memset.bytes, 16u * 4 * 4);
  EXPECT_EQ(records[0].memset.width, 64u) << "a row is 16 elements of 4 bytes";
  EXPECT_EQ(records[0].memset.pitch, 1024u);
  EXPECT_FALSE(records[0].memset.is_async);
}

TEST_F(TranslationTest, RuntimeMemsetsSetBytes) {
  cudaMemset_v3020_params p{ptr(0x7f0000070000), 0x1ff, 32};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaMemset_v3020), "cudaMemset", p);
  EXPECT_EQ(records[0].memset.value, 0xffu) << "only the low byte counts";
  EXPECT_EQ(records[0].memset.element_size, 1);
}

// --- launches ----------------------------------------------------------------------------

class LaunchTranslationTest : public TranslationTest {
 protected:
  void SetUp() override {
    // kernel(float* out, const float* in, int n): 8-byte pointers, a 4-byte int.
    LaunchedFunction& f = cuda_.functions[function_];
    f.name_id = strings_.intern("_Z6kernelPfPKfi");
    f.param_offsets = {0, 8, 16};
    f.param_sizes = {8, 8, 4};
    allocations_.add(0x7f0000100000, 1 << 20, AllocKind::Device, 0, 1);
  }
  // cuLaunchKernel of kernel(out, in, 7): grid 4x2, block 128, 64 B shared, stream 0x9.
  std::vector<Record> launch_out_in() {
    int n = 7;
    void* params[] = {&out_, &in_, &n};
    cuLaunchKernel_params p{(CUfunction)function_, 4, 2, 1, 128, 1, 1, 64,
                            reinterpret_cast<CUstream>(0x9), params, nullptr};
    return call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuLaunchKernel), "cuLaunchKernel", p);
  }
  const void* function_ = reinterpret_cast<const void*>(0xf00);
  uint64_t out_ = 0x7f0000100000, in_ = 0x7f0000100040;
};

TEST_F(LaunchTranslationTest, ADriverLaunchSendsItsPointerWordsAfterIt) {
  uint64_t out = out_, in = in_;
  auto records = launch_out_in();
  ASSERT_EQ(records.size(), 3u);
  const KernelRecord& k = records[0].kernel;
  EXPECT_EQ(records[0].type, RecordType::Kernel);
  EXPECT_EQ(k.launch.grid_x, 4u);
  EXPECT_EQ(k.launch.grid_y, 2u);
  EXPECT_EQ(k.launch.block_x, 128u);
  EXPECT_EQ(k.launch.dynamic_shared_bytes, 64u);
  EXPECT_EQ(k.launch_kind, LaunchKind::Driver);
  EXPECT_EQ(k.name_id, strings_.intern("_Z6kernelPfPKfi"));
  EXPECT_TRUE(k.args_captured);
  EXPECT_EQ(k.arg_words, 2) << "the int is outside every allocation's range";
  const KernelArgsRecord& args = records[1].kernel_args;
  EXPECT_EQ(records[1].type, RecordType::KernelArgs);
  EXPECT_TRUE(args.last);
  ASSERT_EQ(args.count, 2);
  EXPECT_EQ(args.words[0].value, out);
  EXPECT_EQ(args.words[0].param_index, 0);
  EXPECT_EQ(args.words[1].value, in);
  EXPECT_EQ(args.words[1].offset, 8u);
  EXPECT_EQ(args.words[1].param_index, 1);
  EXPECT_EQ(records[2].api.stream, 100 + 9);
}

// --level timing (APPTRACER_KERNEL_ARGUMENTS=off): the launch is recorded,
// its arguments are not read.
TEST_F(LaunchTranslationTest, WithoutKernelArgumentsALaunchIsRecordedAlone) {
  ctx_.kernel_arguments = false;
  auto records = launch_out_in();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].type, RecordType::Kernel);
  EXPECT_FALSE(records[0].kernel.args_captured);
  EXPECT_EQ(records[0].kernel.arg_words, 0);
  EXPECT_TRUE(of_type(records, RecordType::KernelArgs).empty());
}

TEST_F(LaunchTranslationTest, PointersInsideAStructPassedByValueAreFound) {
  LaunchedFunction& f = cuda_.functions[function_];
  f.param_offsets = {0};
  f.param_sizes = {24};
  struct {
    uint64_t a;
    uint64_t count;
    uint64_t b;
  } by_value{0x7f0000100100, 12, 0x7f0000100200};
  void* params[] = {&by_value};
  cuLaunchKernel_params p{(CUfunction)function_, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuLaunchKernel), "cuLaunchKernel", p);
  const KernelArgsRecord& args = records[1].kernel_args;
  ASSERT_EQ(args.count, 2);
  EXPECT_EQ(args.words[0].offset, 0u);
  EXPECT_EQ(args.words[1].offset, 16u);
  EXPECT_EQ(args.words[1].param_size, 24);
}

TEST_F(LaunchTranslationTest, ARuntimeLaunchsRecordNamesTheStreamItsFoldedDriverLaunchNamed) {
  cudaLaunchKernel_v7000_params runtime{};
  cuLaunchKernel_params driver{(CUfunction)function_, 1, 1, 1, 1, 1, 1, 0,
                               reinterpret_cast<CUstream>(0x9), nullptr, nullptr};
  std::vector<Record> calls =
      of_type(nested_call(RT(cudaLaunchKernel_v7000), "cudaLaunchKernel", runtime,
                          DRV(cuLaunchKernel), "cuLaunchKernel", driver),
              RecordType::ApiCall);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_STREQ(calls[0].api.driver_name, "cuLaunchKernel");
  EXPECT_EQ(calls[0].api.stream, 100 + 9) << "the stream the launch went to";
}

TEST_F(LaunchTranslationTest, ThePackedArgumentFormIsScannedAsTheDeviceSeesIt) {
  uint64_t buffer[3] = {0x7f0000100000, 0x7f0000100010, 5};
  size_t size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  cuLaunchKernel_params p{(CUfunction)function_, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuLaunchKernel), "cuLaunchKernel", p);
  const KernelArgsRecord& args = records[1].kernel_args;
  ASSERT_EQ(args.count, 2);
  EXPECT_EQ(args.words[1].param_index, 1) << "placed in its parameter by the layout";
}

TEST_F(LaunchTranslationTest, ALaunchWithoutPointersStillSaysItsArgumentsWereRead) {
  int n = 3;
  LaunchedFunction& f = cuda_.functions[function_];
  f.param_offsets = {0};
  f.param_sizes = {4};
  void* params[] = {&n};
  cuLaunchKernel_params p{(CUfunction)function_, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuLaunchKernel), "cuLaunchKernel", p);
  ASSERT_EQ(of_type(records, RecordType::KernelArgs).size(), 1u);
  EXPECT_EQ(records[1].kernel_args.count, 0);
  EXPECT_TRUE(records[1].kernel_args.last);
}

TEST_F(LaunchTranslationTest, ACooperativeAttributeMakesALaunchExCooperative) {
  uint64_t out = 0x7f0000100000, in = 0, n = 0;
  void* params[] = {&out, &in, &n};
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attribute.value.cooperative = 1;
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = config.blockDimY = config.blockDimZ = 32;
  config.hStream = reinterpret_cast<CUstream>(0x2);
  config.attrs = &attribute;
  config.numAttrs = 1;
  cuLaunchKernelEx_params p{&config, (CUfunction)function_, params, nullptr};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuLaunchKernelEx), "cuLaunchKernelEx", p);
  EXPECT_EQ(records[0].kernel.launch_kind, LaunchKind::Cooperative);
  EXPECT_EQ(records.back().api.stream, 100 + 2);
}

TEST_F(LaunchTranslationTest, ARuntimeLaunchAloneHasItsSymbolButNoArguments) {
  dim3 grid(2), block(64);
  void* args[] = {nullptr};
  cudaLaunchKernel_v7000_params p{function_, grid, block, args, 0, nullptr};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaLaunchKernel_v7000), "cudaLaunchKernel", p,
                      0, "_Z6kernelPfPKfi");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].kernel.args_captured) << "only the driver knows the layout";
  EXPECT_EQ(records[0].kernel.launch.grid_x, 2u);
  EXPECT_EQ(records[1].api.stream, 1) << "the legacy default stream";
}

// --- synchronization and ordering ------------------------------------------------------------

TEST_F(TranslationTest, SynchronizationsSayWhatTheyWaitedForAndForHowLong) {
  cudaStreamSynchronize_v3020_params p{reinterpret_cast<cudaStream_t>(0x21)};
  auto records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaStreamSynchronize_ptsz_v7000),
                      "cudaStreamSynchronize_ptsz", p);
  const SyncRecord& s = records[0].sync;
  EXPECT_EQ(s.kind, SyncKind::Stream);
  EXPECT_EQ(s.stream, 100 + 0x21);
  EXPECT_TRUE(cuda_.last_per_thread);
  EXPECT_GT(s.end_ns, s.start_ns);
  cuEventSynchronize_params event{reinterpret_cast<CUevent>(0x55)};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuEventSynchronize), "cuEventSynchronize", event);
  EXPECT_EQ(records[0].sync.kind, SyncKind::Event);
  EXPECT_EQ(records[0].sync.event_handle, 0x55u);
  EXPECT_EQ(records[0].sync.stream, -1);
}

TEST_F(TranslationTest, EventRecordsAndWaitsOrderStreams) {
  cuEventRecord_params record{reinterpret_cast<CUevent>(0x66), reinterpret_cast<CUstream>(0x7)};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuEventRecord_ptsz), "cuEventRecord_ptsz", record);
  EXPECT_EQ(records[0].stream_event.kind, StreamEventKind::Record);
  EXPECT_EQ(records[0].stream_event.event_handle, 0x66u);
  EXPECT_EQ(records[0].stream_event.stream, 100 + 7);
  EXPECT_TRUE(cuda_.last_per_thread);
  cudaStreamWaitEvent_v3020_params wait{reinterpret_cast<cudaStream_t>(0x8),
                                        reinterpret_cast<cudaEvent_t>(0x66), 0};
  records = call(CUPTI_CB_DOMAIN_RUNTIME_API, RT(cudaStreamWaitEvent_v3020), "cudaStreamWaitEvent", wait);
  EXPECT_EQ(records[0].stream_event.kind, StreamEventKind::Wait);
  EXPECT_EQ(records[0].stream_event.stream, 100 + 8);
  EXPECT_EQ(records[1].api.stream, 100 + 8);
}

TEST_F(TranslationTest, DestroyingAStreamForgetsItsCachedId) {
  cuStreamDestroy_v2_params p{reinterpret_cast<CUstream>(0x12)};
  call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuStreamDestroy_v2), "cuStreamDestroy_v2", p);
  ASSERT_EQ(cuda_.forgotten.size(), 1u);
  EXPECT_EQ(cuda_.forgotten[0], reinterpret_cast<CUstream>(0x12));
}

// --- unified memory ------------------------------------------------------------------------

TEST_F(TranslationTest, AdviceKeepsItsLocationInBothForms) {
  cuMemAdvise_params legacy{0x7f0000200000, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemAdvise), "cuMemAdvise", legacy);
  EXPECT_EQ(records[0].mem_advice.advice, MemAdvice::SetPreferredLocation);
  EXPECT_EQ(records[0].mem_advice.location_type, MemLocationType::Host);
  CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, 1};
  cuMemAdvise_v2_params v2{0x7f0000200000, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, location};
  records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemAdvise_v2), "cuMemAdvise_v2", v2);
  EXPECT_EQ(records[0].mem_advice.location_type, MemLocationType::Device);
  EXPECT_EQ(records[0].mem_advice.location_id, 1);
}

TEST_F(TranslationTest, APerThreadPrefetchRecordsThePerThreadStream) {
  CUmemLocation gpu{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  cuMemPrefetchAsync_v2_params p{0x7f0000200000, 8192, gpu, 0, nullptr};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemPrefetchAsync_v2_ptsz),
                      "cuMemPrefetchAsync_v2_ptsz", p);
  const MemcpyRecord& m = records[0].memcpy;
  EXPECT_EQ(m.kind, CopyKind::Prefetch);
  EXPECT_EQ(m.src, m.dst);
  EXPECT_EQ(m.dst_device, 0);
  EXPECT_EQ(m.stream, 2) << "the calling thread's default stream, not the legacy one";
  EXPECT_TRUE(cuda_.last_per_thread);
}

TEST_F(TranslationTest, ABatchPrefetchIsOneRowPerRangeAtItsLocation) {
  CUdeviceptr ranges[] = {0x7f0000300000, 0x7f0000310000, 0x7f0000320000};
  size_t sizes[] = {4096, 8192, 16384};
  CUmemLocation locations[] = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, {CU_MEM_LOCATION_TYPE_HOST, 0}};
  size_t first[] = {0, 2};
  cuMemPrefetchBatchAsync_params p{ranges, sizes, 3, locations, first, 2, 0, nullptr};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuMemPrefetchBatchAsync),
                      "cuMemPrefetchBatchAsync", p);
  std::vector<Record> prefetches = of_type(records, RecordType::Memcpy);
  ASSERT_EQ(prefetches.size(), 3u);
  EXPECT_EQ(prefetches[1].memcpy.dst_device, 0);
  EXPECT_EQ(prefetches[2].memcpy.dst_device, -1) << "the host";
  EXPECT_EQ(prefetches[2].memcpy.bytes, 16384u);
}

TEST_F(TranslationTest, StreamAttachmentsAreAdviceWithTheirStream) {
  cuStreamAttachMemAsync_params p{reinterpret_cast<CUstream>(0x3), 0x7f0000400000, 0,
                                  CU_MEM_ATTACH_SINGLE};
  auto records = call(CUPTI_CB_DOMAIN_DRIVER_API, DRV(cuStreamAttachMemAsync),
                      "cuStreamAttachMemAsync", p);
  EXPECT_EQ(records[0].mem_advice.advice, MemAdvice::AttachSingle);
  EXPECT_EQ(records[0].mem_advice.stream, 100 + 3);
}

}  // namespace
}  // namespace apptracer::testing
