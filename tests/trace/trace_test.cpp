// The trace model (analyzer/trace): rows read back field by field in their
// packed form, each table read once, a single trace's rows are process 1
// and a merged trace's say theirs, and times count from the trace's start.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analyzer/trace/trace.h"
#include "apptracer/schema.h"
#include "trace_builder.h"

namespace apptracer::trace {
namespace {

// How many statements read each table's rows (a SELECT naming it after
// FROM; counting them, which sizes what is read, reads no row).
class TableReads {
 public:
  explicit TableReads(Database& db) : db_(db) {
    sqlite3_trace_v2(db.handle(), SQLITE_TRACE_STMT, &TableReads::on_statement, this);
  }
  ~TableReads() { sqlite3_trace_v2(db_.handle(), 0, nullptr, nullptr); }

  int of(const std::string& table) const {
    auto found = reads_.find(table);
    return found == reads_.end() ? 0 : found->second;
  }

 private:
  static int on_statement(unsigned, void* self, void* statement, void*) {
    std::string sql = sqlite3_sql(static_cast<sqlite3_stmt*>(statement));
    for (const TableInfo& table : all_tables()) {
      if (sql.rfind("SELECT", 0) == 0 && sql.find("count(*)") == std::string::npos &&
          sql.find(" FROM " + table.name) != std::string::npos)
        ++static_cast<TableReads*>(self)->reads_[table.name];
    }
    return 0;
  }

  Database& db_;
  std::map<std::string, int> reads_;
};

TEST(PackedRows, ReadBackFieldByFieldWithNullsAndNames) {
  testing::TraceBuilder builder;
  testing::KernelRow launch;
  launch.stream = 7;
  launch.grid_x = 128;
  launch.api_start_ns = 1000;
  launch.gpu_start_ns = 1500;
  builder.add(launch);
  testing::DeviceRow device;
  device.numa_node = std::nullopt;
  builder.add_device(device);

  Trace trace(builder.db());
  const Rows<KernelRow>& kernels = trace.rows<KernelRow>();
  ASSERT_EQ(kernels.size(), 1u);
  const Packed<KernelRow>& kernel = kernels[0];
  EXPECT_EQ(kernel.id, 1);
  EXPECT_EQ(kernel.launch_kind, LaunchKind::Driver);
  EXPECT_EQ(kernel.stream, 7);
  EXPECT_EQ(kernel.grid_x, 128);
  EXPECT_EQ(kernel.api_start_ns, 1000);
  EXPECT_EQ(kernel.gpu_start_ns, 1500);
  EXPECT_FALSE(kernel.gpu_end_ns.has_value());
  EXPECT_FALSE(kernel.arg_set_id.has_value());
  EXPECT_EQ(kernel.process, kSingleProcess);
  EXPECT_EQ(trace.string(kernel.demangled_id), "kernel()");
  EXPECT_EQ(trace.string(kernel.name_id), "_Z6kernelv");
  EXPECT_EQ(trace.string(std::nullopt, "?"), "?");

  const Packed<DeviceRow>* gpu = trace.find<DeviceRow>(0);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(trace.text(gpu->name), "NVIDIA H100");
  EXPECT_FALSE(gpu->numa_node.has_value());
  EXPECT_EQ(trace.find<DeviceRow>(1), nullptr);
}

// A launch's row costs what its columns need, not a std::optional's 16
// bytes each: the model holds a million of them for a long training run.
TEST(PackedRows, ANullableColumnTakesEightBytes) {
  static_assert(sizeof(NullableInt) == 8);
  EXPECT_LE(sizeof(Packed<KernelRow>), 200u);
  // NULL is INT64_MIN: a damaged trace's INT64_MIN stays a value, as extreme.
  EXPECT_FALSE(NullableInt().has_value());
  EXPECT_EQ(NullableInt(INT64_MIN), INT64_MIN + 1);
  EXPECT_EQ(NullableInt(std::optional<int64_t>(INT64_MIN)), INT64_MIN + 1);
  EXPECT_EQ(NullableInt(-1), -1);
}

TEST(PackedRows, AColumnOrTableTheTraceLacksReadsAsNone) {
  Database db(std::string(APPTRACER_SCHEMA2_TRACES) + "/vector_add.db", Database::Mode::ReadOnly);
  Trace trace(db);
  ASSERT_FALSE(trace.rows<KernelRow>().empty());
  for (const Packed<KernelRow>& kernel : trace.rows<KernelRow>()) {
    EXPECT_FALSE(kernel.arg_set_id.has_value());  // schema 2 has no argument sets
  }
  EXPECT_TRUE(trace.rows<CollectiveRow>().empty());  // nor collectives
}

// A trace of this schema version lacking a column that always holds a value
// is damaged: its rows are refused, not read with a made-up value. A
// nullable column it lacks reads as none.
// Room is made for the rows there are, whatever their ids: a trace made by
// repeating steps numbers its rows sparsely, and room made for its largest
// id held memory no row used (or, past the file's size, none was made).
TEST(PackedRows, RoomIsMadeForTheRowsThereAre) {
  testing::TraceBuilder builder;
  for (int i = 0; i < 3; ++i) builder.add(testing::KernelRow());
  builder.db().exec("UPDATE kernels SET id = 1000000 WHERE id = 3");
  EXPECT_EQ(detail::expected_rows(builder.db(), table_of<KernelRow>()), 3u);
  Trace trace(builder.db());
  EXPECT_EQ(trace.rows<KernelRow>().capacity(), 3u);
}

TEST(PackedRows, ATraceOfThisVersionLackingAColumnIsDamaged) {
  testing::TraceBuilder builder;
  builder.add(testing::MemsetRow());
  builder.db().exec("ALTER TABLE memsets DROP COLUMN value");
  Trace trace(builder.db());
  try {
    trace.rows<MemsetRow>();
    FAIL() << "read a memset without the value it set";
  } catch (const DamagedTrace& error) {
    EXPECT_NE(std::string(error.what()).find("memsets has no column value"), std::string::npos)
        << error.what();
  }
}

TEST(PackedRows, ATraceOfThisVersionLackingANullableColumnReadsItAsNone) {
  testing::TraceBuilder builder;
  testing::KernelRow launch;
  launch.stream = 7;
  builder.add(launch);
  builder.db().exec("ALTER TABLE kernels DROP COLUMN stream");
  Trace trace(builder.db());
  ASSERT_EQ(trace.rows<KernelRow>().size(), 1u);
  EXPECT_FALSE(trace.rows<KernelRow>()[0].stream.has_value());
}

// Names are handed out as string_views: what the pool holds never moves.
TEST(TextPool, TextOnceAddedStaysWhereItIs) {
  TextPool pool;
  EXPECT_EQ(pool.text(pool.add("")), "");
  TextRef first = pool.add("cudaLaunchKernel");
  std::string_view held = pool.text(first);
  std::string big(200 * 1024, 'x');
  TextRef large = pool.add(big);
  for (int i = 0; i < 100000; ++i) pool.add("kernel_" + std::to_string(i));
  EXPECT_EQ(held.data(), pool.text(first).data());
  EXPECT_EQ(held, "cudaLaunchKernel");
  EXPECT_EQ(pool.text(large), big);
  EXPECT_EQ(pool.text(pool.add("")), "");
  EXPECT_EQ(pool.text(kNoText), "");
  EXPECT_EQ(pool.add("cudaLaunchKernel"), first) << "the same text is held once";
}

TEST(Trace, ReadsATableOnceHoweverOftenAsked) {
  testing::TraceBuilder builder;
  builder.add(testing::KernelRow());
  Trace trace(builder.db());
  TableReads reads(builder.db());
  const Rows<KernelRow>* first = &trace.rows<KernelRow>();
  EXPECT_EQ(first, &trace.rows<KernelRow>());
  EXPECT_NE(trace.find<KernelRow>(1), nullptr);
  EXPECT_EQ(reads.of("kernels"), 1);
  EXPECT_EQ(reads.of("memcpys"), 0);
}

TEST(Trace, RowsGivenBackAreReadAgainWhenAskedFor) {
  testing::TraceBuilder builder;
  builder.add(testing::KernelRow());
  Trace trace(builder.db());
  TableReads reads(builder.db());
  EXPECT_EQ(trace.rows<KernelRow>().size(), 1u);
  EXPECT_EQ(trace.operations().kernels().size(), 1u);
  trace.release_rows();
  EXPECT_EQ(reads.of("kernels"), 1) << "read once so far";
  EXPECT_EQ(trace.operations().kernels().size(), 1u) << "built again over rows read again";
  EXPECT_EQ(trace.rows<KernelRow>().size(), 1u);
  EXPECT_EQ(reads.of("kernels"), 2);
}

// Kernels, copies and memsets with both GPU times count; counting stops
// once it has enough (the report's embedded timeline asks whether a trace
// has more than fit).
TEST(Trace, CountsTimedGpuWorkUpToEnough) {
  testing::TraceBuilder builder;
  for (int i = 0; i < 3; ++i) {
    testing::KernelRow timed;
    timed.gpu_start_ns = 100 * i;
    timed.gpu_end_ns = 100 * i + 50;
    builder.add(timed);
  }
  testing::KernelRow untimed;
  builder.add(untimed);
  testing::MemcpyRow copy;
  copy.gpu_start_ns = 1000;
  copy.gpu_end_ns = 1100;
  builder.add(copy);
  Trace trace(builder.db());
  EXPECT_EQ(trace.timed_gpu_work_count(), 4);
  EXPECT_EQ(trace.timed_gpu_work_count(2), 2);
  EXPECT_EQ(trace.timed_gpu_work_count(3), 3);
  EXPECT_EQ(trace.timed_gpu_work_count(10), 4);
}

TEST(Processes, ASingleTraceIsProcessOneStartingAtMetaStart) {
  testing::TraceBuilder builder;
  builder.set_meta("pid", "4242");
  builder.set_meta("command_line", "/usr/bin/python3 train.py");
  builder.set_meta("start_ns", "1000000");
  Trace trace(builder.db());
  const TraceProcesses& processes = trace.processes();
  EXPECT_FALSE(processes.merged);
  ASSERT_EQ(processes.list.size(), 1u);
  EXPECT_EQ(processes.list[0].process_id, kSingleProcess);
  EXPECT_EQ(processes.list[0].pid, 4242);
  EXPECT_EQ(processes.list[0].name, "python3");
  EXPECT_TRUE(trace.origin().recorded);
  EXPECT_EQ(trace.origin().ns, 1000000);
  EXPECT_EQ(trace.origin().since(1002500), 2500);
  EXPECT_NE(trace.origin().describe().find("since the trace's start"), std::string::npos);
}

TEST(Processes, WithoutARecordedStartTimesAreAsRecorded) {
  testing::TraceBuilder builder;
  Trace trace(builder.db());
  EXPECT_FALSE(trace.origin().recorded);
  EXPECT_EQ(trace.origin().since(777), 777);
  EXPECT_NE(trace.origin().describe().find("records no start"), std::string::npos);
}

// A merged trace (merge.h): rows carry process_id, each process's meta is in
// process_meta, and its times moved by its time_ns offset.
TEST(Processes, AMergedTraceSaysEachRowsProcessAndStartsAtTheEarliestStart) {
  testing::TraceBuilder builder;
  Database& db = builder.db();
  for (const TableInfo* table : tables_with_role(TableRole::Merge)) db.exec(create_table_sql(*table));
  db.exec("ALTER TABLE kernels ADD COLUMN process_id INTEGER");
  db.exec(
      "INSERT INTO processes(process_id, pid, command_line, status) VALUES "
      "(1, 10, './rank0', 'complete'), (2, 11, './rank1', 'complete');"
      "INSERT INTO process_meta VALUES (1, 'start_ns', '5000'), (2, 'start_ns', '4000');"
      "INSERT INTO merge_offsets VALUES (1, 'time_ns', 0), (2, 'time_ns', 2500);");
  testing::KernelRow launch;
  builder.add(launch);
  builder.add(launch);
  db.exec("UPDATE kernels SET process_id = id");

  Trace trace(db);
  const TraceProcesses& processes = trace.processes();
  EXPECT_TRUE(processes.merged);
  ASSERT_EQ(processes.list.size(), 2u);
  EXPECT_EQ(trace.process(2).name, "rank1");
  EXPECT_EQ(processes.find(2)->start_ns, 6500);
  EXPECT_EQ(processes.find(3), nullptr);
  EXPECT_THROW(trace.process(3), TraceError);
  EXPECT_EQ(trace.origin().ns, 5000);
  ASSERT_EQ(trace.rows<KernelRow>().size(), 2u);
  EXPECT_EQ(trace.rows<KernelRow>()[0].process, 1);
  EXPECT_EQ(trace.rows<KernelRow>()[1].process, 2);
}

}  // namespace
}  // namespace apptracer::trace
