// Path names, looking paths up with fallbacks, and hand-made link changes.
#include <gtest/gtest.h>

#include "analyzer/model/copy_path.h"
#include "analyzer/model/link_override.h"
#include "analyzer/model/link_path.h"
#include "analyzer/model/system_model.h"

namespace apptracer::model {
namespace {

TEST(LinkPath, EveryKindRoundTripsThroughItsName) {
  std::vector<LinkPath> paths = {
      {LinkKind::HtoD, HostMemory::Pinned, 0, 0, -1},  {LinkKind::HtoD, HostMemory::Pageable, -1, 3, -1},
      {LinkKind::DtoH, HostMemory::Pageable, 1, 2, -1}, {LinkKind::DtoD, HostMemory::None, -1, 1, -1},
      {LinkKind::PeerDirect, HostMemory::None, -1, 0, 1}, {LinkKind::PeerStaged, HostMemory::None, -1, 1, 0},
      {LinkKind::PrefetchHtoD, HostMemory::None, -1, 0, -1}, {LinkKind::PrefetchDtoH, HostMemory::None, -1, 0, -1},
      {LinkKind::FaultHtoD, HostMemory::None, -1, 7, -1},  {LinkKind::DtoH, HostMemory::Fresh, 0, 1, -1}};
  for (const LinkPath& path : paths) {
    std::optional<LinkPath> parsed = LinkPath::parse(path.name());
    ASSERT_TRUE(parsed) << path.name();
    EXPECT_EQ(*parsed, path) << path.name();
  }
  EXPECT_EQ(paths[0].name(), "HtoD.pinned.node0.gpu0");
  EXPECT_EQ(paths[1].name(), "HtoD.pageable.gpu3");
  EXPECT_EQ(paths[4].name(), "PtoP.peer.gpu0.gpu1");
  EXPECT_EQ(paths[8].name(), "fault.HtoD.gpu7");
  EXPECT_EQ(paths[9].name(), "DtoH.fresh.node0.gpu1");
}

TEST(LinkPath, RejectsWhatIsNotAPath) {
  for (const char* name : {"", "HtoD", "HtoD.pinned", "HtoD.fast.gpu0", "HtoD.pinned.node.gpu0",
                           "HtoD.pinned.node0.gpu", "DtoD.gpu-1", "PtoP.peer.gpu0.gpu0", "PtoP.gpu0.gpu1",
                           "fault.DtoH.gpu0", "prefetch.HtoD", "DtoD.gpu0.extra", "HtoD.fresh.node0.gpu0"}) {
    EXPECT_FALSE(LinkPath::parse(name)) << name;
  }
}

TEST(LinkPath, NamesMatchWholeLeadingParts) {
  EXPECT_TRUE(name_matches("HtoD.pinned.node0.gpu0", "HtoD"));
  EXPECT_TRUE(name_matches("HtoD.pinned.node0.gpu0", "HtoD.pinned"));
  EXPECT_TRUE(name_matches("HtoD.pinned.node0.gpu0", "HtoD.pinned.node0.gpu0"));
  EXPECT_FALSE(name_matches("HtoD.pinned.node0.gpu0", "HtoD.pin"));
  EXPECT_FALSE(name_matches("HtoD.pinned.node0.gpu0", "DtoH"));
}

GpuInfo gpu(int ordinal, const std::string& name, int node) {
  GpuInfo info;
  info.ordinal = ordinal;
  info.name = name;
  info.numa_node = node;
  return info;
}

std::string path_name(const CopyEndpoints& copy, const Placement& placement = {}) {
  std::optional<LinkPath> path = path_of_copy(copy, placement);
  return path ? path->name() : "(none)";
}

TEST(CopyPath, ARecordedCopyTakesThePathOfItsKindMemoryNodeAndGpus) {
  CopyEndpoints htod{CopyKind::HtoD, MemoryKind::Pageable, MemoryKind::Device, std::nullopt, 0, 1, std::nullopt};
  EXPECT_EQ(path_name(htod), "HtoD.pageable.node1.gpu0");
  EXPECT_EQ(path_name(htod, {true, std::nullopt}), "HtoD.pinned.node1.gpu0");
  EXPECT_EQ(path_name(htod, {false, 0}), "HtoD.pageable.node0.gpu0");
  CopyEndpoints dtoh{CopyKind::DtoH, MemoryKind::Device, MemoryKind::Pinned, 2, std::nullopt, std::nullopt,
                     std::nullopt};
  EXPECT_EQ(path_name(dtoh), "DtoH.pinned.gpu2");
  CopyEndpoints dtod{CopyKind::DtoD, MemoryKind::Device, MemoryKind::Device, 1, 1, std::nullopt, std::nullopt};
  EXPECT_EQ(path_name(dtod), "DtoD.gpu1");
  dtod.dst_device = 3;
  EXPECT_EQ(path_name(dtod), "PtoP.peer.gpu1.gpu3");
  CopyEndpoints managed{CopyKind::HtoD, MemoryKind::Managed, MemoryKind::Device, std::nullopt, 0, 0, std::nullopt};
  EXPECT_EQ(path_name(managed), "(none)");
  CopyEndpoints htoh{CopyKind::HtoH, MemoryKind::Pageable, MemoryKind::Pinned, std::nullopt, std::nullopt, 0, 0};
  EXPECT_EQ(path_name(htoh), "(none)");
}

// A copy into pageable memory most of whose sampled pages nothing had touched
// pays their first touch: the fresh path. Pinning makes that moot (pinned
// memory gets its pages when it is allocated).
TEST(CopyPath, ACopyIntoMostlyUntouchedPageableMemoryTakesTheFreshPath) {
  CopyEndpoints dtoh{CopyKind::DtoH, MemoryKind::Device, MemoryKind::Pageable, 0, std::nullopt, std::nullopt, 0,
                     16, 16};
  EXPECT_EQ(path_name(dtoh), "DtoH.fresh.node0.gpu0");
  EXPECT_EQ(path_name(dtoh, {true, std::nullopt}), "DtoH.pinned.node0.gpu0");
  dtoh.dst_untouched_pages = 8;
  EXPECT_EQ(path_name(dtoh), "DtoH.pageable.node0.gpu0");
  dtoh.dst_sampled_pages = dtoh.dst_untouched_pages = 0;  // not probed
  EXPECT_EQ(path_name(dtoh), "DtoH.pageable.node0.gpu0");
}

MeasuredPath measured(const std::string& name, double gbps) {
  return {*LinkPath::parse(name), {}, LinkModel::constant(1000, gbps), ""};
}

// Two H100s near nodes 0 and 1; pinned HtoD measured from node 0 for GPU 0
// and from node 1 for GPU 1; peer access only staged.
SystemModel two_gpu_system() {
  SystemModel system;
  system.machine.hostname = "box";
  system.machine.gpus = {gpu(0, "NVIDIA H100", 0), gpu(1, "NVIDIA H100", 1)};
  system.paths = {measured("HtoD.pinned.node0.gpu0", 50), measured("HtoD.pinned.node1.gpu1", 40),
                  measured("HtoD.pageable.node0.gpu0", 20), measured("PtoP.staged.gpu0.gpu1", 10)};
  return system;
}

TEST(SystemModel, ResolvesExactPathsAndFallsBackToTheClosestMeasured) {
  SystemModel system = two_gpu_system();
  ResolvedPath exact = system.resolve(*LinkPath::parse("HtoD.pinned.node1.gpu1"));
  ASSERT_TRUE(exact.path);
  EXPECT_TRUE(exact.exact);
  // Node 1 for GPU 0 was not measured: GPU 0's own path (its closest node) stands for it.
  ResolvedPath node = system.resolve(*LinkPath::parse("HtoD.pinned.node1.gpu0"));
  ASSERT_TRUE(node.path);
  EXPECT_FALSE(node.exact);
  EXPECT_EQ(node.path->path.name(), "HtoD.pinned.node0.gpu0");
  // Unknown node: the GPU's closest.
  EXPECT_EQ(system.resolve(*LinkPath::parse("HtoD.pinned.gpu1")).path->path.name(), "HtoD.pinned.node1.gpu1");
  // A GPU this machine lacks (a trace from a bigger one): another GPU's path.
  EXPECT_TRUE(system.resolve(*LinkPath::parse("HtoD.pageable.node0.gpu5")).path);
  // Nothing of the kind: nothing.
  EXPECT_FALSE(system.resolve(*LinkPath::parse("DtoH.pinned.node0.gpu0")).path);
  EXPECT_FALSE(system.transfer_ns(*LinkPath::parse("PtoP.peer.gpu0.gpu1"), 100));
  EXPECT_DOUBLE_EQ(*system.transfer_ns(*LinkPath::parse("HtoD.pinned.node0.gpu0"), 50000), 2000);
}

TEST(SystemModel, DescribesItsMachineInOneLine) {
  SystemModel system = two_gpu_system();
  system.machine.measured_at = "2026-01-02T03:04:05Z";
  EXPECT_EQ(system.describe(), "box (2x NVIDIA H100, 2026-01-02T03:04:05Z)");
}

TEST(LinkOverride, ParsesBandwidthAndLatency) {
  LinkOverride change = parse_link_override("HtoD.pinned=bw:25,lat:1.5");
  EXPECT_EQ(change.pattern, "HtoD.pinned");
  EXPECT_DOUBLE_EQ(*change.bandwidth_gbps, 25);
  EXPECT_DOUBLE_EQ(*change.latency_ns, 1500);
  EXPECT_FALSE(parse_link_override("PtoP=lat:2").bandwidth_gbps);
  for (const char* bad : {"HtoD", "=bw:1", "HtoD=", "HtoD=bw", "HtoD=bw:fast", "HtoD=speed:4", "HtoD=bw:0",
                          "HtoD=bw:-3"}) {
    EXPECT_THROW(parse_link_override(bad), std::invalid_argument) << bad;
  }
}

TEST(LinkOverride, ChangesEveryPathItsPatternSelects) {
  SystemModel system = two_gpu_system();
  std::vector<std::string> changed = apply_link_override(system, parse_link_override("HtoD.pinned=bw:100"));
  EXPECT_EQ(changed, (std::vector<std::string>{"HtoD.pinned.node0.gpu0", "HtoD.pinned.node1.gpu1"}));
  EXPECT_DOUBLE_EQ(system.find(*LinkPath::parse("HtoD.pinned.node1.gpu1"))->model.peak_gbps(), 100);
  EXPECT_DOUBLE_EQ(system.find(*LinkPath::parse("HtoD.pageable.node0.gpu0"))->model.peak_gbps(), 20);
}

TEST(LinkOverride, AddsAPathTheMachineLacksOnlyWithBothValues) {
  SystemModel system = two_gpu_system();
  EXPECT_THROW(apply_link_override(system, parse_link_override("PtoP.peer.gpu0.gpu1=bw:300")),
               std::invalid_argument);
  apply_link_override(system, parse_link_override("PtoP.peer.gpu0.gpu1=bw:300,lat:2"));
  EXPECT_DOUBLE_EQ(*system.transfer_ns(*LinkPath::parse("PtoP.peer.gpu0.gpu1"), 300000), 3000);
  EXPECT_THROW(apply_link_override(system, parse_link_override("NVLink=bw:300,lat:2")), std::invalid_argument);
}

}  // namespace
}  // namespace apptracer::model
