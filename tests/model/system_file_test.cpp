// The system file: what is written is read back the same, a model can be
// given by hand or fitted from samples, and every way a file can be wrong is
// one line naming the file.
#include "analyzer/model/system_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "scratch_dir.h"

namespace apptracer::model {
namespace {

SystemModel full_system() {
  SystemModel system;
  Machine& m = system.machine;
  m.hostname = "gpu-box";
  m.cpu_model = "Some CPU @ 2.0GHz";
  m.cpu_sockets = 2;
  m.numa_nodes = {{0, "0-15", int64_t{64} << 30}, {1, "16-31", int64_t{64} << 30}};
  GpuInfo gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.uuid = "GPU-1234";
  gpu.pci_bus_id = "00000000:17:00.0";
  gpu.numa_node = 0;
  gpu.memory_bytes = int64_t{80} << 30;
  gpu.sm_count = 132;
  gpu.cc_major = 9;
  gpu.pcie_generation = 5;
  gpu.pcie_width = 16;
  gpu.nvlinks = 18;
  m.gpus = {gpu};
  GpuConnection connection;
  connection.gpu = 0;
  connection.peer = 1;
  connection.peer_access = true;
  connection.performance_rank = 0;
  connection.nvlink = true;
  connection.pcie_path = "several PCIe switches";
  m.connections = {connection};
  m.driver_version = "580.65.06";
  m.cuda_driver_version = 13000;
  m.measured_at = "2026-01-02T03:04:05Z";
  m.quick = true;
  m.unavailable = {"hwloc (libhwloc.so.15 not found)"};
  MeasuredPath path;
  path.path = *LinkPath::parse("HtoD.pinned.node0.gpu0");
  path.samples = {{4, {2100, 2000, 2050}}, {1 << 20, {22000, 23000, 22500}}};
  std::vector<Sample> flat;
  for (const SizeSamples& size : path.samples) {
    for (double ns : size.ns) flat.push_back({size.bytes, ns});
  }
  path.model = fit_link_model(flat);
  path.note = "thread on node 0";
  path.duplex = Duplex{int64_t{64} << 20, 41.5, 0.83};
  system.paths = {path};
  system.graph_launch = fit_graph_launch(
      0, {{64, {820, 850, 840}, {2600, 2500, 2550}}, {512, {830, 845, 835}, {4400, 4300, 4350}}});
  return system;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(SystemFile, WhatIsWrittenIsReadBack) {
  SystemModel system = full_system();
  testing::ScratchDir scratch;
  std::string path = scratch / "roundtrip.json";
  write(path, system_to_json(system));
  SystemModel back = load_system(path);
  EXPECT_EQ(system_to_json(back), system_to_json(system));
  const Machine& m = back.machine;
  EXPECT_EQ(m.hostname, "gpu-box");
  EXPECT_EQ(m.cpu_sockets, 2);
  ASSERT_EQ(m.numa_nodes.size(), 2u);
  EXPECT_EQ(m.numa_nodes[1].cpus, "16-31");
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].cc_major, 9);
  EXPECT_EQ(m.gpus[0].pcie_generation, 5);
  EXPECT_EQ(m.gpus[0].nvlinks, 18);
  ASSERT_EQ(m.connections.size(), 1u);
  EXPECT_TRUE(m.connections[0].nvlink);
  EXPECT_EQ(m.connections[0].performance_rank, 0);
  EXPECT_TRUE(m.quick);
  ASSERT_EQ(back.paths.size(), 1u);
  EXPECT_EQ(back.paths[0].samples[1].ns[2], 22500);
  EXPECT_EQ(back.paths[0].note, "thread on node 0");
  ASSERT_TRUE(back.paths[0].duplex);
  EXPECT_EQ(back.paths[0].duplex->bytes, int64_t{64} << 20);
  EXPECT_DOUBLE_EQ(back.paths[0].duplex->gbps, 41.5);
  EXPECT_DOUBLE_EQ(back.paths[0].duplex->factor, 0.83);
  for (int64_t bytes : {4, 4096, 1 << 20, 1 << 28}) {
    EXPECT_DOUBLE_EQ(back.paths[0].model.transfer_ns(bytes), system.paths[0].model.transfer_ns(bytes));
  }
  ASSERT_TRUE(back.graph_launch);
  EXPECT_EQ(back.graph_launch->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(back.graph_launch->samples[1].launch_ns[2], 4350);
  EXPECT_DOUBLE_EQ(back.graph_launch->node_ns, system.graph_launch->node_ns);
  EXPECT_DOUBLE_EQ(back.graph_launch->launch_host_ns(300), system.graph_launch->launch_host_ns(300));
}

// A graph's launch cost from fabricated measurements: the GPU's time
// between nodes is the median of every repetition's (837.5 of six), the
// host's launch cost the line through the two sizes' medians, 2550 ns at
// 64 nodes and 4350 at 512: 4.0178... ns per node on 2292.9 ns.
TEST(SystemFile, AGraphLaunchIsFittedFromItsMeasurements) {
  GraphLaunch g = fit_graph_launch(
      1, {{512, {830, 845, 835}, {4400, 4300, 4350}}, {64, {820, 850, 840}, {2600, 2500, 2550}}});
  EXPECT_EQ(g.gpu, 1);
  EXPECT_DOUBLE_EQ(g.node_ns, 837.5);
  EXPECT_DOUBLE_EQ(g.launch_ns_per_node, 1800.0 / 448);
  EXPECT_DOUBLE_EQ(g.launch_ns, 2550 - 64 * 1800.0 / 448);
  EXPECT_DOUBLE_EQ(g.launch_host_ns(512), 4350);
  // Launching a larger graph cost less: no negative slope, all of it fixed.
  GraphLaunch flat = fit_graph_launch(0, {{64, {900}, {3000}}, {512, {900}, {2900}}});
  EXPECT_DOUBLE_EQ(flat.launch_ns_per_node, 0);
  EXPECT_DOUBLE_EQ(flat.launch_ns, 3000);
  EXPECT_THROW(fit_graph_launch(0, {{64, {}, {}}}), std::invalid_argument);
}

// A system file with `cost`, written and read back: the same JSON again.
SystemModel with_tracing_cost_read_back(const TracingCost& cost) {
  SystemModel system = full_system();
  system.tracing_cost = cost;
  SystemModel back = system_from_json(system_to_json(system), "back.json");
  EXPECT_EQ(system_to_json(back), system_to_json(system));
  return back;
}

// What tracing adds to a launch: each level's median of its rounds, never
// below 0; a trace's level is read from its meta options; written and read
// back whole.
TEST(SystemFile, ATracingCostIsFittedAndReadBack) {
  TracingCost c = fit_tracing_cost(0, {2100, 2000, 2050}, {3400, 3300, 3500}, {1900, 2200, 2300});
  EXPECT_DOUBLE_EQ(c.untraced_ns, 2050);
  EXPECT_DOUBLE_EQ(c.added_ns(TracingLevel::Full), 3400 - 2050);
  EXPECT_DOUBLE_EQ(c.added_ns(TracingLevel::Timing), 2200 - 2050);
  EXPECT_DOUBLE_EQ(fit_tracing_cost(0, {2000}, {1900}, {1800}).added_ns(TracingLevel::Full), 0);
  EXPECT_THROW(fit_tracing_cost(0, {}, {1}, {1}), std::invalid_argument);
  EXPECT_EQ(tracing_level_of("output=a.db kernel_arguments=off host_allocations=off"), TracingLevel::Timing);
  EXPECT_EQ(tracing_level_of("output=a.db host_allocations=touched"), TracingLevel::Full);
  SystemModel back = with_tracing_cost_read_back(c);
  ASSERT_TRUE(back.tracing_cost);
  EXPECT_EQ(back.tracing_cost->full_samples, (std::vector<double>{3400, 3300, 3500}));
  SystemModel older = system_from_json(system_to_json(full_system()), "older.json");
  EXPECT_FALSE(older.tracing_cost);
  const char* path = R"("paths": [{"name": "DtoD.gpu0", "model": {"latency_ns": 1, "bandwidth": [{"bytes": 1, "gbps": 1}]}}])";
  EXPECT_THROW(system_from_json(std::string(R"({"format": "apptracer system", "version": 3, )") + path +
                                    R"(, "tracing_cost": {"untraced_ns": 1, "full_ns": -1, "timing_ns": 1}})",
                                "bad.json"),
               SystemFileError);
  EXPECT_THROW(system_from_json(std::string(R"({"format": "apptracer system", "version": 3, )") + path +
                                    R"(, "tracing_cost": {"untraced_ns": 1, "full_ns": 1, "timing_ns": 1, )"
                                    R"("full_callbacks_ns": -1}})",
                                "bad.json"),
               SystemFileError);
}

// links splits off the tracer's own callbacks (medians of their rounds):
// CUPTI's part is the rest, never below 0; a file without them splits
// nothing and writes none; written and read back whole.
TEST(SystemFile, TheTracersCallbacksAreSplitFromCuptis) {
  TracingCost c = fit_tracing_cost(0, {2100, 2000, 2050}, {3400, 3300, 3500}, {1900, 2200, 2300});
  EXPECT_FALSE(c.callbacks_measured());
  EXPECT_DOUBLE_EQ(c.cupti_added_ns(TracingLevel::Full), 3400 - 2050);
  c.fit_callbacks({400, 300, 350}, {100, 200, 150});
  EXPECT_TRUE(c.callbacks_measured());
  EXPECT_DOUBLE_EQ(c.full_callbacks_ns, 350);
  EXPECT_DOUBLE_EQ(c.cupti_added_ns(TracingLevel::Full), 3400 - 2050 - 350);
  EXPECT_DOUBLE_EQ(c.cupti_added_ns(TracingLevel::Timing), 2200 - 2050 - 150);
  EXPECT_DOUBLE_EQ(c.added_ns(TracingLevel::Full), 3400 - 2050);
  TracingCost all_callbacks = c;
  all_callbacks.fit_callbacks({5000}, {5000});
  EXPECT_DOUBLE_EQ(all_callbacks.cupti_added_ns(TracingLevel::Full), 0);
  SystemModel back = with_tracing_cost_read_back(c);
  ASSERT_TRUE(back.tracing_cost);
  EXPECT_EQ(back.tracing_cost->timing_callbacks_samples, (std::vector<double>{100, 200, 150}));
  SystemModel system = full_system();
  system.tracing_cost = fit_tracing_cost(0, {2000}, {3000}, {2500});
  EXPECT_EQ(system_to_json(system).find("callbacks"), std::string::npos);
}

// Version 1 files (before links measured graph launches) read without one
// and write none; a hand-written one needs only its model, and samples
// alone are fitted.
TEST(SystemFile, AGraphLaunchIsOptionalAndMayBeWrittenByHand) {
  const char* path = R"("paths": [{"name": "DtoD.gpu0", "model": {"latency_ns": 1, "bandwidth": [{"bytes": 1, "gbps": 1}]}}])";
  SystemModel old = system_from_json(std::string(R"({"format": "apptracer system", "version": 1, )") + path + "}",
                                     "old.json");
  EXPECT_FALSE(old.graph_launch);
  EXPECT_EQ(system_to_json(old).find("graph_launch"), std::string::npos);
  EXPECT_NE(system_to_json(old).find("\"version\": 3"), std::string::npos);
  SystemModel hand = system_from_json(std::string(R"({"format": "apptracer system", "version": 2, )") + path +
                                          R"(, "graph_launch": {"node_ns": 700, "launch_ns": 2000}})",
                                      "hand.json");
  ASSERT_TRUE(hand.graph_launch);
  EXPECT_DOUBLE_EQ(hand.graph_launch->node_ns, 700);
  EXPECT_DOUBLE_EQ(hand.graph_launch->launch_host_ns(1000), 2000);
  SystemModel sampled = system_from_json(
      std::string(R"({"format": "apptracer system", "version": 2, )") + path +
          R"(, "graph_launch": {"gpu": 0, "samples": [{"nodes": 64, "node_ns": [600, 640], "launch_ns": [3000]}]}})",
      "sampled.json");
  ASSERT_TRUE(sampled.graph_launch);
  EXPECT_DOUBLE_EQ(sampled.graph_launch->node_ns, 620);
  EXPECT_DOUBLE_EQ(sampled.graph_launch->launch_host_ns(64), 3000);
}

TEST(SystemFile, AModelWrittenByHandNeedsNoSamples) {
  SystemModel system = system_from_json(R"({"format": "apptracer system", "version": 1,
    "paths": [{"name": "DtoH.pageable.node0.gpu0",
               "model": {"latency_ns": 500, "bandwidth": [{"bytes": 1, "gbps": 10}]}}]})",
                                        "hand.json");
  EXPECT_DOUBLE_EQ(*system.transfer_ns(*LinkPath::parse("DtoH.pageable.node0.gpu0"), 10000), 1500);
}

TEST(SystemFile, SamplesWithoutAModelAreFitted) {
  SystemModel system = system_from_json(R"({"format": "apptracer system", "version": 1,
    "paths": [{"name": "DtoD.gpu0", "samples": [{"bytes": 4, "ns": [1004]}, {"bytes": 8, "ns": [1008]},
                                                {"bytes": 1048576, "ns": [1049576]}]}]})",
                                        "samples.json");
  const LinkModel& model = system.paths[0].model;
  EXPECT_NEAR(model.latency_ns(), 1000, 1e-9);
  EXPECT_NEAR(model.bandwidth_gbps(1 << 20), 1, 1e-12);
}

// A file written before links measured both directions at once loads; its
// paths have no duplex measurement (whatif takes 1 and says so where it
// matters). A hand-written one needs only the factor.
TEST(SystemFile, DuplexIsOptionalAndNeedsOnlyItsFactor) {
  SystemModel old = system_from_json(R"({"format": "apptracer system", "version": 1,
    "paths": [{"name": "HtoD.pinned.node0.gpu0",
               "model": {"latency_ns": 500, "bandwidth": [{"bytes": 1, "gbps": 10}]}}]})",
                                     "old.json");
  EXPECT_FALSE(old.paths[0].duplex);
  EXPECT_EQ(system_to_json(old).find("duplex"), std::string::npos);
  SystemModel hand = system_from_json(R"({"format": "apptracer system", "version": 1,
    "paths": [{"name": "DtoH.pinned.node0.gpu0", "duplex": {"factor": 0.5},
               "model": {"latency_ns": 500, "bandwidth": [{"bytes": 1, "gbps": 10}]}}]})",
                                      "hand.json");
  ASSERT_TRUE(hand.paths[0].duplex);
  EXPECT_DOUBLE_EQ(hand.paths[0].duplex->factor, 0.5);
  EXPECT_EQ(hand.paths[0].duplex->bytes, 0);
}

// Each error is one line naming the file.
void expect_error(const std::string& text, const std::string& says) {
  testing::ScratchDir scratch;
  std::string path = scratch / "broken.json";
  write(path, text);
  try {
    load_system(path);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const SystemFileError& error) {
    std::string message = error.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(says), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(SystemFile, EveryWayAFileCanBeWrongIsOneLine) {
  expect_error("{ \"format\": \"apptracer system\", ", "not valid JSON");
  expect_error("kernel,stream\n1,2\n", "not valid JSON");
  expect_error("{\"paths\": []}", "not an apptracer system file");
  expect_error("[1, 2]", "not an apptracer system file");
  expect_error(R"({"format": "apptracer system", "version": 99, "paths": []})", "newer than this apptracer");
  expect_error(R"({"format": "apptracer system", "version": 1})", "malformed system file");
  expect_error(R"({"format": "apptracer system", "version": 1, "paths": [{"name": "HtoD.fast.gpu0"}]})",
               "unknown path name 'HtoD.fast.gpu0'");
  expect_error(R"({"format": "apptracer system", "version": 1, "paths": [{"name": "DtoD.gpu0"}]})",
               "neither model nor samples");
  expect_error(R"({"format": "apptracer system", "version": 1, "paths": [{"name": "DtoD.gpu0",
                   "model": {"latency_ns": "fast", "bandwidth": []}}]})",
               "malformed system file");
  expect_error(R"({"format": "apptracer system", "version": 1, "paths": [{"name": "DtoD.gpu0",
                   "model": {"latency_ns": 1, "bandwidth": [{"bytes": 1, "gbps": 0}]}}]})",
               "positive bandwidths");
  expect_error(R"({"format": "apptracer system", "version": 1, "paths": [{"name": "DtoD.gpu0",
                   "duplex": {"factor": 1.5}, "model": {"latency_ns": 1, "bandwidth": [{"bytes": 1, "gbps": 1}]}}]})",
               "duplex factor 1.500000 is not in (0, 1]");
  expect_error(R"({"format": "apptracer system", "version": 1, "paths": [{"name": "DtoD.gpu0",
                   "duplex": {"gbps": 3}, "model": {"latency_ns": 1, "bandwidth": [{"bytes": 1, "gbps": 1}]}}]})",
               "malformed system file");
  expect_error(R"({"format": "apptracer system", "version": 4, "paths": []})", "newer than this apptracer understands (3)");
  expect_error(R"({"format": "apptracer system", "version": 2, "paths": [], "graph_launch": {"gpu": 0}})",
               "graph_launch has neither node_ns and launch_ns nor samples");
  expect_error(R"({"format": "apptracer system", "version": 2, "paths": [],
                   "graph_launch": {"node_ns": -5, "launch_ns": 2000}})",
               "graph_launch: a negative time");
}

TEST(SystemFile, AMissingFileSaysHowToMakeOne) {
  try {
    load_system("/nonexistent/system.json");
    FAIL();
  } catch (const SystemFileError& error) {
    EXPECT_STREQ(error.what(),
                 "/nonexistent/system.json: no such system file; measure this machine with "
                 "'apptracer links -o /nonexistent/system.json'");
  }
}

}  // namespace
}  // namespace apptracer::model
