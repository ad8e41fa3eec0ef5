// One price for one change: what `diagnose` promises for pinning a
// program's pageable copies (its pageable_copy findings) and what `whatif
// --pin` predicts the program saves agree on the same trace and system file.
//
// They cannot agree exactly: diagnose compares each copy's own time (its
// staging call, less the time its stream held it, or its DMA) with the
// pinned path's time, while whatif replays the program, where the pinned
// copy still pays the trace's typical launch latency, call and return
// after a synchronization, and the host's work after the copy's call runs
// under it. Per copy these differ by a few microseconds, a few percent of a
// staged copy of a MiB; diagnose also leaves out groups of copies too small
// to report (under 10 us in all) that whatif pins with the rest.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "command_runner.h"
#include "whatif_fixture.h"

namespace apptracer::whatif {
namespace {

using dvdg::CommandOutput;
using dvdg::run_apptracer;

struct Savings {
  double diagnose_ns = 0;  // the pageable_copy findings' savings
  double whatif_ns = 0;    // whatif --pin: baseline - what-if
  double baseline_ns = 0;
  double recorded_ns = 0;
};

Savings savings(const std::string& trace, const std::string& system) {
  Savings out;
  // The whole run, as whatif replays it (diagnose's default is the steady steps).
  CommandOutput diagnosed =
      run_apptracer("diagnose " + trace + " --system " + system + " --whole-run --json --all");
  EXPECT_EQ(diagnosed.exit_code, 0) << diagnosed.err;
  nlohmann::json diagnosis = nlohmann::json::parse(diagnosed.out);
  for (const nlohmann::json& finding : diagnosis["findings"]) {
    if (finding["rule"] == "pageable_copy") out.diagnose_ns += finding["saving_ns"].get<double>();
  }
  CommandOutput predicted = run_apptracer("whatif " + trace + " --system " + system + " --pin --format json");
  EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
  nlohmann::json result = nlohmann::json::parse(predicted.out);
  out.baseline_ns = result["baseline_ns"].get<double>();
  out.recorded_ns = result["recorded_ns"].get<double>();
  out.whatif_ns = out.baseline_ns - result["predicted_ns"].get<double>();
  return out;
}

// Four steps of a loop: a kernel, then a 1 MB copy from pageable memory its
// stream holds behind the kernel (staged 40 us after the kernel ends, 20 us
// of DMA), a cudaStreamSynchronize, host work. `links` prices the copy at
// 52 us pageable, 22 us pinned. Diagnose: each copy holds the program
// 59,980 ns (its 79,900 ns call less the 19,920 ns the kernel held its
// stream), pinned 22,000 ns: 37,980 ns saved. Whatif: pinned, the copy runs
// from the kernel's end, [20,020, 42,020], and the synchronization returns
// after it as long after as it did after the copy as recorded (200 ns):
// 38,080 ns sooner, 0.3% more than diagnose's (the host's 200 ns between the
// copy's call and the synchronization now run under the copy).
TEST_F(WhatifTest, DiagnoseAndWhatifAgreeOnWhatPinningSaves) {
  write_system({"HtoD.pageable.node0.gpu0 2000 20", "HtoD.pinned.node0.gpu0 2000 50"});
  for (int64_t base = 0; base < 400'000; base += 100'000) {
    kernel(call("cudaLaunchKernel", base, base + 10), base, base + 20, base + 20'020);
    copy(call("cudaMemcpyAsync", base + 100, base + 80'000), Copy{CopyKind::HtoD, MemoryKind::Pageable, 1'000'000},
         base + 100, base + 60'000, base + 80'100);
    sync(call("cudaStreamSynchronize", base + 80'200, base + 80'300), SyncKind::Stream, base + 80'200,
         base + 80'300, 7);
  }
  trace_.reset();
  Savings found = savings(trace_path_, system_path_);
  EXPECT_EQ(found.diagnose_ns, 4 * 37'980);
  EXPECT_EQ(found.whatif_ns, 4 * 38'080);
  EXPECT_EQ(found.baseline_ns, found.recorded_ns);
}

// The bundled PyTorch training trace (30 steps, each copying a 1 MiB batch
// and a 2 KiB one from pageable memory with .cuda(), on an H200) and the
// system file measured there: each path's pageable copies replay within 5%
// of the recording (the system file's pageable path had made them 13%
// faster); the run replays as recorded, less the tracer's own hooks the
// trace measured (0.8% of it); and pinning saves about what diagnose
// promises (6.7 ms; the replay 6.1 ms): the backward pass runs on autograd's
// own thread, which the main thread wakes and waits for, so the replay moves
// it with the main thread; what it saves less is the host time between a
// copy's call and the next wait, which now runs under the pinned copy.
TEST(PinAgreement, OnTheBundledPyTorchTraceCopiesReplayAsRecordedAndPinningSaves) {
  testing::ScratchDir scratch;
  std::string trace = scratch / "pytorch_train.db";
  std::filesystem::copy_file(std::string(APPTRACER_EXAMPLES) + "/pytorch_train.db", trace);
  std::string system = std::string(APPTRACER_EXAMPLES) + "/h200.system.json";
  CommandOutput predicted = run_apptracer("whatif " + trace + " --system " + system + " --pin --format json");
  ASSERT_EQ(predicted.exit_code, 0) << predicted.err;
  nlohmann::json result = nlohmann::json::parse(predicted.out);
  for (const nlohmann::json& row : result["transfers"]) {
    if (row["path"].get<std::string>().find(".pageable.") == std::string::npos) continue;
    double recorded = row["recorded_ns"].get<double>();
    EXPECT_NEAR(row["baseline_ns"].get<double>(), recorded, 0.05 * recorded) << row["path"];
  }
  Savings found = savings(trace, system);
  EXPECT_LE(found.baseline_ns, found.recorded_ns);
  EXPECT_NEAR(found.baseline_ns, found.recorded_ns, 0.01 * found.recorded_ns);
  EXPECT_NEAR(found.whatif_ns, found.diagnose_ns, 0.15 * found.diagnose_ns);
}

}  // namespace
}  // namespace apptracer::whatif
