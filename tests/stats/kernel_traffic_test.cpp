// Kernels' loads and stores in another GPU's memory or pinned host memory
// (trace/remote_kernel_traffic.h): the bytes per path, exact with --exact's
// ranges and a bound from pointer arguments, and `stats --report
// kernel_traffic`, as a report and through the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "dvdg_fixture.h"
#include "analyzer/stats/stats_reports.h"
#include "analyzer/trace/remote_kernel_traffic.h"
#include "report_test_helpers.h"

namespace apptracer::trace {
namespace {

using A = AccessKind;
using S = AccessSource;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kOn1 = 0x7f1000000000;

class KernelTraffic : public dvdg::DvdgTest {
 public:
  // A buffer in GPU `device`'s memory.
  int64_t gpu_buffer(int64_t device, int64_t address, int64_t bytes) {
    testing::AllocationRow row;
    row.kind = AllocKind::Device;
    row.device = device;
    row.address = address;
    row.bytes = bytes;
    return trace_->add(row);
  }

  // Kernel `kernel_id`'s launch as --exact recorded it, and one of its ranges.
  int64_t exact_launch(int64_t kernel_id) {
    ExactLaunchRow row;
    row.id = ++launches_;
    row.kernel_id = kernel_id;
    row.pages = 1;
    row.approximate = 0;
    row.incomplete = ExactGap::None;
    return trace_->add(row);
  }

  // "PATH kind bytes exact|bound" per kernel and path.
  std::vector<std::string> traffic() {
    Trace trace(trace_->db());
    std::vector<std::string> lines;
    for (const RemoteTraffic& t : remote_kernel_traffic(trace)) {
      lines.push_back(t.path.name() + " " + traffic_kind(t) + " " + std::to_string(t.bytes) + " " +
                      bytes_are(t.exact));
    }
    return lines;
  }

  int64_t launches_ = 0;
};

using Lines = std::vector<std::string>;

// store(int* out) on GPU 0 into GPU 1's buffer: without --exact its pointer
// (not const) may load as well as store, to the buffer's end.
TEST_F(KernelTraffic, PointerArgumentsBoundThePeerBytes) {
  int64_t on1 = gpu_buffer(1, kOn1, 16 * kMiB);
  kernel("store", {{on1, A::ReadWrite, S::Assumed}}, 100);
  kernel("read_tail", {{on1, A::Read, S::ConstSignature, 4 * kMiB}}, 200);
  EXPECT_EQ(traffic(), (Lines{"PtoP.peer.gpu0.gpu1 kernel peer stores 16777216 bound",
                              "PtoP.peer.gpu1.gpu0 kernel peer loads 16777216 bound",
                              "PtoP.peer.gpu1.gpu0 kernel peer loads 12582912 bound"}));
}

// Two pointers into one buffer reach over the same bytes: counted once.
TEST_F(KernelTraffic, OverlappingPointersCountTheirBytesOnce) {
  int64_t on1 = gpu_buffer(1, kOn1, 16 * kMiB);
  kernel("pair", {{on1, A::Read, S::ConstSignature}, {on1, A::Read, S::ConstSignature, 8 * kMiB}}, 100);
  EXPECT_EQ(traffic(), (Lines{"PtoP.peer.gpu1.gpu0 kernel peer loads 16777216 bound"}));
}

// --exact: the bytes the GPU touched, each way as it touched them.
TEST_F(KernelTraffic, ExactRangesGiveTheBytesTouched) {
  int64_t on1 = gpu_buffer(1, kOn1, 16 * kMiB);
  int64_t k = kernel("store", {{on1, A::ReadWrite, S::Assumed}}, 100);
  int64_t launch = exact_launch(k);
  trace_->add_exact_range(launch, on1, 0, kMiB, A::Write);
  trace_->add_exact_range(launch, on1, 2 * kMiB, kMiB, A::Write);
  trace_->add_exact_range(launch, on1, 8 * kMiB, 4096, A::ReadWrite);
  EXPECT_EQ(traffic(), (Lines{"PtoP.peer.gpu0.gpu1 kernel peer stores 2101248 exact",
                              "PtoP.peer.gpu1.gpu0 kernel peer loads 4096 exact"}));
}

// Its own GPU's memory and managed memory are not traffic over a path.
TEST_F(KernelTraffic, OwnMemoryAndManagedMemoryAreLeftOut) {
  int64_t own = buffer("own", AllocKind::Device, 0x7f0000000000, kMiB);
  int64_t managed = buffer("managed", AllocKind::Managed, 0x7f2000000000, kMiB);
  kernel("local", {{own, A::ReadWrite, S::Assumed}, {managed, A::ReadWrite, S::Assumed}}, 100);
  EXPECT_TRUE(traffic().empty());
  ReportOutput report = testing::run_report(kernel_traffic_report, trace_->db());
  EXPECT_TRUE(report.tables.empty());
  EXPECT_EQ(report.note, "no kernel loaded or stored another GPU's memory or pinned host memory");
}

// Mapped host memory read in place (zero-copy): the pinned HtoD path of the
// kernel's GPU, from the memory's NUMA node.
TEST_F(KernelTraffic, MappedHostMemoryIsTheHostPath) {
  testing::AllocationRow row;
  row.kind = AllocKind::MappedHost;
  row.device = std::nullopt;
  row.numa_node = 1;
  row.address = 0x5000000;
  row.bytes = kMiB;
  int64_t mapped = trace_->add(row);
  kernel("gather", {{mapped, A::Read, S::ConstSignature}}, 100);
  EXPECT_EQ(traffic(), (Lines{"HtoD.pinned.node1.gpu0 kernel host loads 1048576 bound"}));
}

// Summed per path, kind and exactness: kernels and bytes.
TEST_F(KernelTraffic, StatsReportSumsPerPath) {
  int64_t on1 = gpu_buffer(1, kOn1, 16 * kMiB);
  int64_t exact = kernel("store", {{on1, A::ReadWrite, S::Assumed}}, 100);
  trace_->add_exact_range(exact_launch(exact), on1, 0, 16 * kMiB, A::Write);
  kernel("store", {{on1, A::Write, S::Sanitizer}}, 200);
  kernel("store", {{on1, A::Write, S::Sanitizer}}, 300);
  ReportOutput report = testing::run_report(kernel_traffic_report, trace_->db());
  ASSERT_EQ(report.tables.size(), 1u);
  const Table& table = report.tables[0];
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(testing::text(table, 0, "path"), "PtoP.peer.gpu0.gpu1");
  EXPECT_EQ(testing::text(table, 0, "kind"), "kernel peer stores");
  EXPECT_EQ(testing::text(table, 0, "bytes_are"), "bound");
  EXPECT_EQ(testing::integer(table, 0, "kernels"), 2);
  EXPECT_EQ(testing::integer(table, 0, "bytes"), 32 * kMiB);
  EXPECT_EQ(testing::text(table, 1, "bytes_are"), "exact");
  EXPECT_EQ(testing::integer(table, 1, "kernels"), 1);
  EXPECT_EQ(testing::integer(table, 1, "bytes"), 16 * kMiB);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The real binary: `stats` prints the table beside the copies.
TEST_F(KernelTraffic, StatsCommandPrintsIt) {
  int64_t on1 = gpu_buffer(1, kOn1, 16 * kMiB);
  kernel("store", {{on1, A::Write, S::Sanitizer}}, 100);
  trace_.reset();
  std::string out = path_ + ".out";
  std::string command = std::string(APPTRACER_BIN) + " stats " + path_ + " --report kernel_traffic --format csv >" +
                        out + " 2>&1";
  int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(out);
  EXPECT_EQ(read_file(out),
            "path,kind,kernels,bytes,bytes_are\r\n"
            "PtoP.peer.gpu0.gpu1,kernel peer stores,1,16777216,bound\r\n");
}

}  // namespace
}  // namespace apptracer::trace
