// Row structs in and out of their tables: what RowInserter writes,
// RowReader reads back field for field, and a column a file lacks reads as
// its default.
#include <gtest/gtest.h>

#include "apptracer/row_inserter.h"
#include "apptracer/row_reader.h"
#include "apptracer/schema.h"

namespace apptracer {
namespace {

Database create_schema() {
  Database db(":memory:", Database::Mode::Create);
  with_transaction(db, [&] { db.exec(trace_schema_sql()); });
  return db;
}

TEST(Rows, WhatIsInsertedReadsBackFieldForField) {
  Database db = create_schema();
  MemcpyRow copy;
  copy.kind = CopyKind::DtoH;
  copy.bytes = 4096;
  copy.src_memory = MemoryKind::Device;
  copy.dst_memory = MemoryKind::Pinned;
  copy.src_alloc_id = 7;
  copy.dst_numa_node = 1;
  copy.is_async = 1;
  copy.gpu_start_ns = 100;
  copy.gpu_end_ns = 250;
  RowInserter<MemcpyRow> insert(db);
  int64_t id = insert.insert(copy);
  MemcpyRow other;
  other.kind = CopyKind::HtoD;
  other.bytes = 8;
  insert.insert(other);

  std::vector<MemcpyRow> read;
  for_each_row<MemcpyRow>(db, "ORDER BY id", [&](const MemcpyRow& row) { read.push_back(row); });
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].id.value, id);
  EXPECT_EQ(read[0].kind, CopyKind::DtoH);
  EXPECT_EQ(read[0].bytes, 4096);
  EXPECT_EQ(read[0].src_memory, MemoryKind::Device);
  EXPECT_EQ(read[0].dst_memory, MemoryKind::Pinned);
  EXPECT_EQ(read[0].src_alloc_id, 7);
  EXPECT_EQ(read[0].dst_alloc_id, std::nullopt);
  EXPECT_EQ(read[0].dst_numa_node, 1);
  EXPECT_EQ(read[0].gpu_end_ns, 250);
  EXPECT_EQ(read[1].kind, CopyKind::HtoD);
  EXPECT_EQ(read[1].gpu_start_ns, std::nullopt);
}

// A batch leaves out binding what a parameter already holds: each row must
// still read back as given where a column repeats, changes, or turns NULL and
// back at the same place in consecutive batches.
TEST(Rows, BatchedRowsReadBackAsGivenWhereValuesRepeatAndChange) {
  Database db = create_schema();
  BatchInserter<MemcpyRow> insert(db);
  auto row_of = [](int64_t i) {
    MemcpyRow row;
    row.kind = i % 5 == 0 ? CopyKind::DtoH : CopyKind::HtoD;
    row.bytes = i % 3;
    if ((i / 7) % 2 == 0) row.src_alloc_id = 5;
    if (i % 11 != 0) row.dst_alloc_id = i;
    row.gpu_start_ns = i;
    return row;
  };
  const int64_t rows = 3 * static_cast<int64_t>(BatchInserter<MemcpyRow>::kMaxBatchRows) + 5;
  with_transaction(db, [&] {
    for (int64_t i = 0; i < rows; ++i) insert.add(row_of(i));
    insert.flush();
  });
  int64_t i = 0;
  for_each_row<MemcpyRow>(db, "ORDER BY id", [&](const MemcpyRow& row) {
    MemcpyRow expected = row_of(i++);
    EXPECT_EQ(row.kind, expected.kind) << "row " << i - 1;
    EXPECT_EQ(row.bytes, expected.bytes) << "row " << i - 1;
    EXPECT_EQ(row.src_alloc_id, expected.src_alloc_id) << "row " << i - 1;
    EXPECT_EQ(row.dst_alloc_id, expected.dst_alloc_id) << "row " << i - 1;
    EXPECT_EQ(row.gpu_start_ns, expected.gpu_start_ns) << "row " << i - 1;
  });
  EXPECT_EQ(i, rows);
}

TEST(Rows, AWhereClauseTakesParameters) {
  Database db = create_schema();
  RowInserter<MetaRow> insert(db);
  MetaRow a, b;
  a.key = TextKey("status");
  a.value = "complete";
  b.key = TextKey("pid");
  b.value = "42";
  insert.insert(a);
  insert.insert(b);
  RowReader<MetaRow> reader(db, "WHERE key = ?");
  reader.statement().bind(1, std::string_view("pid"));
  MetaRow row;
  ASSERT_TRUE(reader.next(row));
  EXPECT_EQ(row.value, "42");
  EXPECT_FALSE(reader.next(row));
}

TEST(Rows, AColumnTheFileLacksReadsAsItsDefault) {
  // A trace written before numa_node existed.
  Database db(":memory:", Database::Mode::Create);
  db.exec(
      "CREATE TABLE devices (id INTEGER PRIMARY KEY, name TEXT, uuid TEXT);"
      "INSERT INTO devices (id, name, uuid) VALUES (0, 'G', 'GPU-1');");
  std::vector<DeviceRow> read;
  for_each_row<DeviceRow>(db, "", [&](const DeviceRow& row) { read.push_back(row); });
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].id.value, 0);
  EXPECT_EQ(read[0].name, "G");
  EXPECT_EQ(read[0].numa_node, std::nullopt);
}

}  // namespace
}  // namespace apptracer
