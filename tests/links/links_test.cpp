// `apptracer links` on CPU: what it plans to measure, what it reads about
// the host, and what it says on a machine without a GPU driver.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "apptracer/gpu_identity.h"
#include "command_runner.h"
#include "analyzer/links/host_topology.h"
#include "analyzer/links/node_buffer.h"
#include "analyzer/links/path_plan.h"
#include "analyzer/links/tracing_cost.h"
#include "scratch_dir.h"
#include "trace_builder.h"

namespace apptracer::links {
namespace {

using model::GpuConnection;
using model::GpuInfo;

PlanInput three_gpus(bool quick) {
  PlanInput input;
  for (int ordinal = 0; ordinal < 3; ++ordinal) {
    GpuInfo gpu;
    gpu.ordinal = ordinal;
    input.gpus.push_back(gpu);
  }
  input.numa_nodes = {0, 1};
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      if (a == b) continue;
      GpuConnection connection;
      connection.gpu = a;
      connection.peer = b;
      connection.peer_access = a + b != 3;  // 1 <-> 2 without peer access
      input.connections.push_back(connection);
    }
  }
  input.managed = {true, false, true};
  input.quick = quick;
  return input;
}

std::vector<std::string> names(const std::vector<PlannedPath>& plan) {
  std::vector<std::string> out;
  for (const PlannedPath& p : plan) out.push_back(p.path.name());
  return out;
}

TEST(PathPlan, EveryGpuNodeAndPairInFullMode) {
  std::vector<PlannedPath> plan = plan_paths(three_gpus(false));
  std::vector<std::string> all = names(plan);
  // 2 nodes x 3 GPUs x ({pageable, pinned} x {HtoD, DtoH} + fresh DtoH), 3 DtoD,
  // 2 x 3 managed, 6 ordered pairs staged + 4 with peer access.
  EXPECT_EQ(plan.size(), 30u + 3 + 6 + 6 + 4);
  EXPECT_EQ(all.front(), "HtoD.pageable.node0.gpu0");
  for (const char* expected : {"DtoH.pinned.node1.gpu2", "DtoH.fresh.node1.gpu0", "DtoD.gpu1", "fault.HtoD.gpu2", "prefetch.DtoH.gpu0",
                               "PtoP.staged.gpu1.gpu2", "PtoP.peer.gpu2.gpu0"}) {
    EXPECT_NE(std::find(all.begin(), all.end(), expected), all.end()) << expected;
  }
  for (const char* absent : {"prefetch.HtoD.gpu1", "PtoP.peer.gpu1.gpu2", "HtoD.fresh.node0.gpu0"}) {
    EXPECT_EQ(std::find(all.begin(), all.end(), absent), all.end()) << absent;
  }
  EXPECT_EQ(plan.front().sizes.front(), 4);
  EXPECT_EQ(plan.front().sizes.back(), int64_t{256} << 20);
  EXPECT_EQ(plan.front().sizes.size(), 27u);
  EXPECT_EQ(plan.front().repetitions, 5);
  for (const PlannedPath& p : plan) {
    if (p.path.kind == model::LinkKind::FaultHtoD) {
      EXPECT_EQ(p.sizes.front(), 4096);
    }
  }
}

TEST(PathPlan, QuickMeasuresFewerSizesAndOnlyPairsWithGpu0) {
  std::vector<PlannedPath> plan = plan_paths(three_gpus(true));
  std::vector<std::string> all = names(plan);
  EXPECT_EQ(std::find(all.begin(), all.end(), "PtoP.staged.gpu1.gpu2"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "PtoP.staged.gpu2.gpu0"), all.end());
  EXPECT_EQ(planned_sizes(true),
            (std::vector<int64_t>{4, 64, 1024, 16384, 262144, 1048576, 4194304, 16777216, 67108864}));
  EXPECT_EQ(planned_repetitions(true), 3);
  int64_t samples = 0;
  for (const PlannedPath& p : plan) samples += p.samples();
  // Enough for medians, few enough for --quick's budget.
  EXPECT_LT(samples, 1500);
}

TEST(PathPlan, AMachineWithoutNumaInformationStillGetsHostPaths) {
  PlanInput input = three_gpus(false);
  input.numa_nodes.clear();
  std::vector<std::string> all = names(plan_paths(input));
  EXPECT_NE(std::find(all.begin(), all.end(), "HtoD.pinned.gpu0"), all.end());
}

// Per GPU, pageable and pinned, both directions at once at the largest size,
// from the GPU's own node (else the first node measured): the paths whose
// duplex factor it gives are measured alone too.
TEST(PathPlan, DuplexPerGpuAndHostMemoryFromTheGpusNode) {
  PlanInput input = three_gpus(false);
  input.gpus[1].numa_node = 1;
  input.gpus[2].numa_node = 3;  // a node without memory: not measured
  std::vector<PlannedDuplex> plan = plan_duplex(input);
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[0].name(), "HtoD+DtoH.pageable.node0.gpu0");
  EXPECT_EQ(plan[3].name(), "HtoD+DtoH.pinned.node1.gpu1");
  EXPECT_EQ(plan[3].htod().name(), "HtoD.pinned.node1.gpu1");
  EXPECT_EQ(plan[3].dtoh().name(), "DtoH.pinned.node1.gpu1");
  EXPECT_EQ(plan[5].numa_node, 0);
  std::vector<std::string> paths = names(plan_paths(input));
  for (const PlannedDuplex& d : plan) {
    EXPECT_EQ(d.bytes, int64_t{256} << 20);
    EXPECT_NE(std::find(paths.begin(), paths.end(), d.htod().name()), paths.end()) << d.name();
    EXPECT_NE(std::find(paths.begin(), paths.end(), d.dtoh().name()), paths.end()) << d.name();
  }
  input.numa_nodes.clear();
  EXPECT_EQ(plan_duplex(input)[0].name(), "HtoD+DtoH.pageable.gpu0");
}

TEST(PathPlan, QuickDuplexIsAFewCopiesOfTheQuickLargestSize) {
  std::vector<PlannedDuplex> plan = plan_duplex(three_gpus(true));
  ASSERT_EQ(plan.size(), 6u);
  int64_t samples = 0;
  for (const PlannedDuplex& d : plan) {
    EXPECT_EQ(d.bytes, planned_sizes(true).back());
    EXPECT_GE(d.copies, 3);  // one left out, a median of the rest
    samples += d.samples();
  }
  // 64 MiB copies take 1-5 ms each: well under a second per GPU.
  EXPECT_LE(samples, 6 * 4 * 5);
}

// A directory laid out like / with the files host_topology reads.
class FakeRoot : public ::testing::Test {
 public:
  void SetUp() override { root_ = scratch_.path() + "/"; }
  void file(const std::string& path, const std::string& text) {
    std::string full = root_ + path;
    for (size_t slash = full.find('/', 1); slash != std::string::npos; slash = full.find('/', slash + 1)) {
      mkdir(full.substr(0, slash).c_str(), 0755);
    }
    std::ofstream(full) << text;
  }
  testing::ScratchDir scratch_;
  std::string root_;
};

TEST_F(FakeRoot, ReadsCpuSocketsAndNodesWithMemory) {
  file("proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU @ 3.0GHz\n\nprocessor\t: 1\n");
  file("proc/sys/kernel/hostname", "fakehost\n");
  file("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
  file("sys/devices/system/cpu/cpu1/topology/physical_package_id", "1\n");
  file("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       1024 kB\nNode 0 MemFree: 5 kB\n");
  file("sys/devices/system/node/node0/cpulist", "0\n");
  file("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       0 kB\n");
  file("sys/devices/system/node/node1/cpulist", "1\n");
  HostTopology host = read_host_topology(root_);
  EXPECT_EQ(host.hostname, "fakehost");
  EXPECT_EQ(host.cpu_model, "Test CPU @ 3.0GHz");
  EXPECT_EQ(host.sockets, 2);
  ASSERT_EQ(host.numa_nodes.size(), 1u) << "node 1 has no memory to place buffers in";
  EXPECT_EQ(host.numa_nodes[0].id, 0);
  EXPECT_EQ(host.numa_nodes[0].memory_bytes, 1 << 20);
  EXPECT_EQ(host.numa_nodes[0].cpus, "0");
  EXPECT_TRUE(host.unavailable.empty());
}

TEST_F(FakeRoot, SaysWhenThereIsNoNumaInformation) {
  file("proc/cpuinfo", "model name\t: X\n");
  HostTopology host = read_host_topology(root_);
  EXPECT_TRUE(host.numa_nodes.empty());
  ASSERT_EQ(host.unavailable.size(), 1u);
  EXPECT_NE(host.unavailable[0].find("NUMA nodes"), std::string::npos);
}

TEST_F(FakeRoot, FindsAGpusNodeFromItsPciBusId) {
  file("sys/bus/pci/devices/0000:17:00.0/numa_node", "1\n");
  EXPECT_EQ(numa_node_of_pci("00000000:17:00.0", root_), 1);
  EXPECT_EQ(numa_node_of_pci("0000:17:00.0", root_), 1);
  EXPECT_EQ(numa_node_of_pci("0000:99:00.0", root_), -1);
}

TEST(HostTopology, ParsesKernelCpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("3-1"), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("a-b"), std::vector<int>{});
}

TEST(GpuIdentity, FormatsUuidsAsNvidiaSmiDoes) {
  const char bytes[16] = {0x12, 0x34, 0x56, 0x78, static_cast<char>(0x9a), static_cast<char>(0xbc), 0, 1,
                          2, 3, 4, 5, 6, 7, 8, static_cast<char>(0xff)};
  EXPECT_EQ(format_gpu_uuid(bytes), "GPU-12345678-9abc-0001-0203-0405060708ff");
}

TEST(NodeBuffer, PlacesPagesOnTheNodeAsked) {
  std::ifstream node0("/sys/devices/system/node/node0/meminfo");
  if (!node0) GTEST_SKIP() << "no NUMA information on this machine";
  NodeBuffer buffer(1 << 20, 0);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(static_cast<unsigned char*>(buffer.data())[12345], 0x5a);
  // Where move_pages is not allowed (some containers) the node is unknown; it is never another one.
  int node = node_of_pages(buffer.data(), buffer.bytes());
  EXPECT_TRUE(node == 0 || node == -1) << node;
  if (node == 0) {
    EXPECT_EQ(buffer.placement_problem(), "");
  }
}

bool driver_loadable() {
  void* library = dlopen("libcuda.so.1", RTLD_LAZY);
  if (library) dlclose(library);
  return library != nullptr;
}

// The traced launch loop's own callbacks per call, from its trace: the
// stretch of the timed batches alone (3,840 launches and 15 synchronizations,
// 320 ns each), not the set-up's before it (10 calls whose callbacks took
// 1 ms: loading the kernel) nor the quiet stretch after it.
TEST(TracingCost, TheLoopsCallbacksComeFromTheTimedBatchesStretch) {
  testing::TraceBuilder builder;
  auto calls = [&](int count, int64_t from) {
    for (int i = 0; i < count; ++i) builder.add_call(i + from, "cudaLaunchKernel", 1, from + i * 10, from + i * 10 + 5);
  };
  calls(10, 0);
  calls(3'855, 100'000'000);
  int64_t timed = 3'855;
  builder.add_tracer_time(0, 100'000'000, TracerSite::ApiCallback, 1, 1'000'000, 1);
  builder.add_tracer_time(100'000'000, 200'000'000, TracerSite::ApiCallback, 120, timed * 320 / 32, 32);
  builder.add_tracer_time(200'000'000, 300'000'000, TracerSite::ApiCallback, 1, 10, 1);
  builder.set_meta("tracer_time_clock_ns", "0");
  trace::Trace trace(builder.db());
  EXPECT_DOUBLE_EQ(loop_callbacks_ns(trace), 320);
  // A trace without tracer_time, or without a stretch of the timed batches, splits nothing.
  testing::TraceBuilder set_up_only;
  set_up_only.add_call(1, "cudaLaunchKernel", 1, 0, 5);
  set_up_only.add_tracer_time(0, 100'000'000, TracerSite::ApiCallback, 1, 1'000'000, 1);
  trace::Trace short_trace(set_up_only.db());
  EXPECT_EQ(loop_callbacks_ns(short_trace), 0);
}

TEST(LinksCommand, WithoutADriverSaysSoInOneLineAndWritesNothing) {
  if (driver_loadable()) GTEST_SKIP() << "a CUDA driver is installed here";
  testing::ScratchDir scratch;
  std::string output = scratch / "no_driver.json";
  dvdg::CommandOutput result = dvdg::run_apptracer("links --quick -o " + output);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err,
            "apptracer: no CUDA driver here (libcuda.so.1 cannot be loaded): nothing to measure\n");
  EXPECT_TRUE(result.out.empty()) << result.out;
  EXPECT_FALSE(std::ifstream(output).good());
}

TEST(LinksCommand, NeverReplacesAnExistingFileWithoutForce) {
  testing::ScratchDir scratch;
  std::string output = scratch / "existing.json";
  std::ofstream(output) << "keep me";
  dvdg::CommandOutput result = dvdg::run_apptracer("links -o " + output);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "apptracer: " + output + ": already exists; use --force to replace it\n");
  std::ifstream in(output);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "keep me");
}

}  // namespace
}  // namespace apptracer::links
