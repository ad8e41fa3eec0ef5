// Reading a large table: several threads read it, each over its own rowid
// range, and give the rows a single reader gives, in the same order; a
// stream read ahead gives its query's rows in its order (a whole table's
// in rowid order, a chunk at a time on several threads), stops when dropped
// early, and throws what reading threw; a pass that names
// its columns reads only those; a launch's size outside its recorded width
// reads as NULL.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/trace/trace.h"
#include "scratch_dir.h"
#include "trace_builder.h"

namespace apptracer::trace {
namespace {

// Enough kernels for three readers, their ids spread out as a trace made by
// repeating steps numbers them (every third id), their starts descending.
constexpr int64_t kKernels = 3 * 65536 + 100;

std::string large_trace(const testing::ScratchDir& scratch) {
  std::string path = scratch / "large.db";
  testing::TraceBuilder builder(path);
  builder.db().exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT " + std::to_string(kKernels) +
      ") INSERT INTO kernels (id, launch_kind, stream, grid_x, gpu_start_ns, gpu_end_ns) "
      "SELECT 3 * i, 1, i % 7, CASE WHEN i % 5 = 0 THEN NULL ELSE i END, 1000000 - i, 1000000 - i + 5 FROM n");
  return path;
}

struct Kernel {
  int64_t id, stream, gpu_start_ns;
  std::optional<int64_t> grid_x;
  bool operator==(const Kernel& other) const {
    return std::tie(id, stream, gpu_start_ns, grid_x) ==
           std::tie(other.id, other.stream, other.gpu_start_ns, other.grid_x);
  }
};

std::vector<Kernel> kernels_of(const Rows<KernelRow>& rows) {
  std::vector<Kernel> kernels;
  for (const Packed<KernelRow>& row : rows)
    kernels.push_back({row.id, *row.stream, *row.gpu_start_ns, row.grid_x.optional()});
  return kernels;
}

TEST(TableReader, ALargeTableReadByThreadsIsTheTableReadByOne) {
  testing::ScratchDir scratch;
  std::string path = large_trace(scratch);
  Trace parallel(path, TraceAccess::ReadOnly);
  std::vector<detail::RowidRange> ranges =
      detail::reading_ranges(parallel.db(), table_of<KernelRow>(), kKernels, 8);
  ASSERT_EQ(ranges.size(), 3u) << "a reader per 65,536 rows";
  EXPECT_EQ(ranges.front().first, INT64_MIN);
  EXPECT_EQ(ranges.back().second, 3 * kKernels) << "the largest rowid";
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_EQ(ranges[i].first, ranges[i - 1].second + 1);

  Database writable(path, Database::Mode::ReadWrite);
  EXPECT_EQ(detail::reading_ranges(writable, table_of<KernelRow>(), kKernels, 8).size(), 1u)
      << "a writer's connection reads alone: its uncommitted rows are its own";
  Trace serial(writable, path);

  std::vector<Kernel> by_threads = kernels_of(parallel.rows<KernelRow>());
  ASSERT_EQ(by_threads.size(), static_cast<size_t>(kKernels));
  EXPECT_EQ(by_threads.front().id, 3);
  EXPECT_EQ(by_threads.back().id, 3 * kKernels);
  EXPECT_FALSE(by_threads[4].grid_x.has_value());
  EXPECT_EQ(by_threads, kernels_of(serial.rows<KernelRow>()));
}

// A launch's sizes are held at the 32 bits the tracer records them in: a
// damaged trace's size those bits cannot hold reads as NULL (nullable_int.h).
TEST(TableReader, ALaunchSizeOutsideItsRecordedWidthReadsAsNull) {
  testing::TraceBuilder builder;
  builder.db().exec(
      "INSERT INTO kernels (id, launch_kind, stream, grid_x, gpu_start_ns, gpu_end_ns) VALUES "
      "(1, 1, 0, 2147483647, 10, 20), (2, 1, 0, 4294967294, 10, 20), (3, 1, 0, 4294967295, 10, 20), "
      "(4, 1, 0, 4294967296, 10, 20), (5, 1, 0, -1, 10, 20), (6, 1, 0, NULL, 10, 20)");
  Trace trace(builder.db());
  std::vector<std::optional<int64_t>> grid_x;
  for (const Packed<KernelRow>& row : trace.rows<KernelRow>()) grid_x.push_back(row.grid_x.optional());
  std::vector<std::optional<int64_t>> expected = {2147483647, 4294967294, std::nullopt, std::nullopt, std::nullopt,
                                                  std::nullopt};
  EXPECT_EQ(grid_x, expected);
}

TEST(TableReader, AnInMemoryTraceIsReadByOneThread) {
  testing::TraceBuilder builder;
  EXPECT_EQ(detail::reading_ranges(builder.db(), table_of<KernelRow>(), kKernels, 8).size(), 1u);
}

TEST(ReadAhead, GivesTheRowsInTheOrderAsked) {
  testing::ScratchDir scratch;
  Trace trace(large_trace(scratch), TraceAccess::ReadOnly);
  std::unique_ptr<ReadAhead<KernelRow>> ahead = trace.read_ahead<KernelRow>("ORDER BY gpu_start_ns");
  ASSERT_NE(ahead, nullptr);
  Packed<KernelRow> row;
  int64_t rows = 0, last_start = INT64_MIN;
  while (ahead->next(row)) {
    EXPECT_GT(*row.gpu_start_ns, last_start);
    last_start = *row.gpu_start_ns;
    ++rows;
  }
  EXPECT_EQ(rows, kKernels);
  EXPECT_FALSE(ahead->next(row)) << "the end stays the end";
}

TEST(TableReader, ChunksCoverEveryRowidInOrder) {
  testing::ScratchDir scratch;
  Trace trace(large_trace(scratch), TraceAccess::ReadOnly);
  std::vector<detail::RowidRange> chunks =
      detail::rowid_chunks(trace.db(), table_of<KernelRow>(), kKernels, 4096);
  ASSERT_EQ(chunks.size(), static_cast<size_t>(kKernels / 4096));
  EXPECT_EQ(chunks.front().first, INT64_MIN);
  EXPECT_EQ(chunks.back().second, 3 * kKernels) << "the largest rowid";
  for (size_t i = 1; i < chunks.size(); ++i) EXPECT_EQ(chunks[i].first, chunks[i - 1].second + 1);
  EXPECT_TRUE(detail::rowid_chunks(trace.db(), table_of<KernelRow>(), kKernels, kKernels).empty())
      << "one chunk's worth is read as it comes";
}

// A whole table is read a chunk of rowids at a time by several threads, and
// comes in rowid order, as one statement gives it.
TEST(ReadAhead, AWholeTableReadByThreadsComesInRowidOrder) {
  testing::ScratchDir scratch;
  Trace trace(large_trace(scratch), TraceAccess::ReadOnly);
  std::vector<Kernel> streamed;
  std::unique_ptr<ReadAhead<KernelRow>> ahead = trace.read_ahead<KernelRow>("");
  Packed<KernelRow> row;
  while (ahead->next(row)) streamed.push_back({row.id, *row.stream, *row.gpu_start_ns, row.grid_x.optional()});
  EXPECT_FALSE(ahead->next(row)) << "the end stays the end";
  ASSERT_EQ(streamed.size(), static_cast<size_t>(kKernels));
  EXPECT_EQ(streamed, kernels_of(trace.rows<KernelRow>()));
}

TEST(ReadAhead, StopsWhenDroppedBeforeTheEnd) {
  testing::ScratchDir scratch;
  Trace trace(large_trace(scratch), TraceAccess::ReadOnly);
  for (int taken : {0, 1, 5000}) {
    std::unique_ptr<ReadAhead<KernelRow>> ahead = trace.read_ahead<KernelRow>("");
    Packed<KernelRow> row;
    for (int i = 0; i < taken; ++i) ASSERT_TRUE(ahead->next(row));
  }
}

TEST(ReadAhead, ThrowsWhatReadingThrew) {
  testing::ScratchDir scratch;
  Trace trace(large_trace(scratch), TraceAccess::ReadOnly);
  std::unique_ptr<ReadAhead<KernelRow>> ahead = trace.read_ahead<KernelRow>("WHERE no_such_column = 1");
  Packed<KernelRow> row;
  EXPECT_THROW(ahead->next(row), SqliteError);
}

// A pass that names its columns gets those as a whole read gives them, and
// zero or none in the others, in the order asked, on a thread ahead or not.
TEST(StreamColumns, ReadsTheNamedColumnsAndLeavesTheOthersEmpty) {
  testing::ScratchDir scratch;
  Trace trace(large_trace(scratch), TraceAccess::ReadOnly);
  std::vector<Kernel> whole;
  trace.stream<KernelRow>("ORDER BY gpu_start_ns", [&](const Packed<KernelRow>& row) {
    whole.push_back({row.id, *row.stream, *row.gpu_start_ns, row.grid_x.optional()});
  });
  std::vector<Kernel> named;
  int64_t with_others = 0;
  trace.stream_columns<KernelRow>({"id", "stream", "gpu_start_ns"}, "ORDER BY gpu_start_ns",
                                  [&](const Packed<KernelRow>& row) {
                                    named.push_back({row.id, *row.stream, *row.gpu_start_ns, std::nullopt});
                                    with_others += row.grid_x || row.gpu_end_ns || row.launch_kind != LaunchKind{};
                                  });
  ASSERT_EQ(named.size(), whole.size());
  for (Kernel& kernel : whole) kernel.grid_x.reset();
  EXPECT_EQ(named, whole);
  EXPECT_EQ(with_others, 0) << "columns not named are not read";
}

}  // namespace
}  // namespace apptracer::trace
