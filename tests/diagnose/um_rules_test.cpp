// Unified memory: on-demand migration (with the prefetch that avoids it)
// and data moving back and forth (with the advice that stops it).
#include "diagnose_fixture.h"
#include "analyzer/diagnose/system_file_cost.h"

namespace apptracer::diagnose {
namespace {

using A = AccessKind;
constexpr int64_t kMiB = int64_t{1} << 20;

class UmRules : public DiagnoseTest {
 public:
  UmRules() : managed(buffer(AllocKind::Managed, 8 * kMiB)) {}

  int64_t address() {
    Statement q = trace.db().prepare("SELECT address FROM allocations WHERE id = ?");
    q.bind(1, managed);
    q.step();
    return q.int64(0);
  }

  // `count` migrations of 2 MiB, 50 us each from `start`; to the device or the host.
  void migrate(int64_t start, int count, bool to_device, UmMigrationCause cause) {
    for (int i = 0; i < count; ++i) {
      testing::UmEventRow row;
      row.counter_kind = to_device ? UmCounterKind::BytesHtoD : UmCounterKind::BytesDtoH;
      row.address = address() + i * 2 * kMiB;
      row.bytes = row.value = 2 * kMiB;
      row.alloc_id = managed;
      row.alloc_offset = i * 2 * kMiB;
      row.dst_device = to_device ? std::optional<int64_t>(0) : std::nullopt;
      row.src_device = to_device ? std::nullopt : std::optional<int64_t>(0);
      row.start_ns = start + i * 50'000;
      row.end_ns = start + (i + 1) * 50'000;
      row.cause = static_cast<int64_t>(cause);
      trace.add(row);
    }
  }

  int64_t managed;
};

TEST_F(UmRules, KernelFaultingItsDataInOnDemand) {
  int64_t k = kernel("reader", 1'000'000, 1'000'000, {{managed, A::Read}});
  migrate(1'000'000, 4, true, UmMigrationCause::Coherence);
  auto found = findings("um_on_demand_migration");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 200'000);
  EXPECT_FALSE(found[0].saving_ns);  // no managed or pinned path in the trace
  EXPECT_EQ(rows_of(found[0], "kernels"), std::vector<int64_t>{k});
  EXPECT_EQ(rows_of(found[0], "um_events"), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_NE(found[0].fix.find("cudaMemPrefetchAsync(ptr, 8 MiB, device 0"), std::string::npos)
      << found[0].fix;

  model::SystemModel machine;
  machine.paths.push_back({*model::LinkPath::parse("prefetch.HtoD.gpu0"), {},
                           model::LinkModel::constant(0, 100.0), ""});
  SystemFileCost system("system.json", machine);
  found = findings("um_on_demand_migration", &system);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].saving_ns, 200'000 - 83'886);  // 8 MiB at 100 GB/s
}

// The kernel starts at 1 ms and waits on faults until its last page
// arrives at 1.4 ms; the records time only the 200 us of transfers. The
// prefetch removes the whole wait.
TEST_F(UmRules, AFaultingKernelWaitsFromItsStartToItsLastPage) {
  kernel("reader", 1'000'000, 1'000'000, {{managed, A::Read}});
  migrate(1'200'000, 4, true, UmMigrationCause::Coherence);
  model::SystemModel machine;
  machine.paths.push_back({*model::LinkPath::parse("prefetch.HtoD.gpu0"), {},
                           model::LinkModel::constant(0, 100.0), ""});
  SystemFileCost system("system.json", machine);
  auto found = findings("um_on_demand_migration", &system);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 400'000);
  EXPECT_EQ(found[0].saving_ns, 400'000 - 83'886);  // 8 MiB at 100 GB/s
}

// After the kernel, the CPU pulls the data back: two 50 us transfers 250 us
// apart, the CPU faulting in between. It waits from the first to the last.
TEST_F(UmRules, TheCpuPullingDataBackWaitsFromItsFirstMigrationToItsLast) {
  kernel("writer", 1'000'000, 1'000'000, {{managed, A::ReadWrite}});
  migrate(3'000'000, 1, false, UmMigrationCause::Coherence);
  migrate(3'300'000, 1, false, UmMigrationCause::Coherence);
  auto found = findings("um_on_demand_migration");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].what.find("pulled back by the CPU"), std::string::npos) << found[0].what;
  EXPECT_EQ(found[0].cost_ns, 350'000);
}

TEST_F(UmRules, PrefetchedDataIsNotOnDemand) {
  testing::MemcpyRow prefetch;
  prefetch.kind = CopyKind::Prefetch;
  prefetch.src_alloc_id = prefetch.dst_alloc_id = managed;
  prefetch.src_address = prefetch.dst_address = address();
  prefetch.bytes = 8 * kMiB;
  prefetch.src_memory = prefetch.dst_memory = MemoryKind::Managed;
  prefetch.dst_device = 0;
  prefetch.stream = 7;
  prefetch.api_start_ns = 500'000;
  trace.add(prefetch);
  migrate(600'000, 4, true, UmMigrationCause::User);
  kernel("reader", 1'000'000, 1'000'000, {{managed, A::Read}});
  EXPECT_TRUE(findings("um_on_demand_migration").empty());
  EXPECT_TRUE(findings("um_thrashing").empty());
}

// GPU reads it, the CPU pulls it back, the GPU faults it in again.
TEST_F(UmRules, ThrashingBetweenHostAndDevice) {
  kernel("reader", 1'000'000, 1'000'000, {{managed, A::Read}});
  migrate(1'000'000, 1, true, UmMigrationCause::Coherence);
  migrate(3'000'000, 1, false, UmMigrationCause::Coherence);
  kernel("reader", 4'000'000, 1'000'000, {{managed, A::Read}});
  migrate(4'000'000, 1, true, UmMigrationCause::Coherence);
  auto found = findings("um_thrashing");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].cost_ns, 150'000);
  // The advice keeps the first move in; the two after it go.
  EXPECT_EQ(found[0].saving_ns, 100'000);
  EXPECT_NE(found[0].what.find("3 times"), std::string::npos) << found[0].what;
  EXPECT_NE(found[0].fix.find("cudaMemAdviseSetReadMostly"), std::string::npos) << found[0].fix;
}

TEST_F(UmRules, WrittenByTheGpuTheAdviceIsPreferredLocation) {
  kernel("writer", 1'000'000, 1'000'000, {{managed, A::ReadWrite}});
  migrate(1'000'000, 1, true, UmMigrationCause::Coherence);
  migrate(3'000'000, 1, false, UmMigrationCause::Coherence);
  kernel("writer", 4'000'000, 1'000'000, {{managed, A::ReadWrite}});
  migrate(4'000'000, 1, true, UmMigrationCause::Coherence);
  auto found = findings("um_thrashing");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].fix.find("cudaMemAdviseSetPreferredLocation, device 0"), std::string::npos)
      << found[0].fix;
}

TEST_F(UmRules, MigratingOnceIsNotThrashing) {
  kernel("reader", 1'000'000, 1'000'000, {{managed, A::Read}});
  migrate(1'000'000, 1, true, UmMigrationCause::Coherence);
  kernel("reader", 4'000'000, 1'000'000, {{managed, A::Read}});
  EXPECT_TRUE(findings("um_thrashing").empty());
}

// Migrations are recorded only when asked for: without them the rules see
// no movement at all, and diagnose says what to record instead of nothing.
TEST_F(UmRules, MigrationsNotRecordedAreSaidInOneLine) {
  kernel("reader", 1'000'000, 1'000'000, {{managed, A::Read}});
  auto notes_with = [&](const std::string& counters) {
    trace.set_meta("um_counters", counters);
    trace::Trace model(trace.db());
    return diagnosis_notes(read_trace_facts(model));
  };
  std::vector<std::string> notes = notes_with(
      "enabled: CPU page fault; unsupported: none; not asked for: bytes HtoD, bytes DtoH");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "the program uses managed memory but its migrations were not recorded: the "
            "unified-memory rules need 'apptracer record --unified-memory migrations' (or all)");
  EXPECT_TRUE(notes_with("enabled: bytes HtoD, bytes DtoH; unsupported: none; not asked for: "
                         "thrashing")
                  .empty());
}

TEST(DiagnosisNotes, NoManagedMemoryNoNote) {
  testing::TraceBuilder trace;
  trace.set_meta("um_counters", "enabled: none; unsupported: none; not asked for: bytes HtoD");
  trace::Trace model(trace.db());
  EXPECT_TRUE(diagnosis_notes(read_trace_facts(model)).empty());
}

// A PyTorch program (its caching allocator's blocks) recorded without
// framework context is told how to get the modules and ops; with it, not.
TEST(DiagnosisNotes, APytorchTraceWithoutFrameworkContextSaysHowToRecordIt) {
  testing::TraceBuilder trace;
  testing::SubAllocationRow block;
  block.allocator = SubAllocator::PytorchCaching;
  trace.add(block);
  auto notes = [&] {
    trace::Trace model(trace.db());
    return diagnosis_notes(read_trace_facts(model));
  };
  std::vector<std::string> without = notes();
  ASSERT_EQ(without.size(), 1u);
  EXPECT_NE(without[0].find("'apptracer record' (by default, or with --framework-context sampled)"),
            std::string::npos)
      << without[0];
  testing::FrameworkRangeRow range;
  range.start_ns = 10;
  range.end_ns = 20;
  trace.add(range);
  EXPECT_TRUE(notes().empty());
}

}  // namespace
}  // namespace apptracer::diagnose
