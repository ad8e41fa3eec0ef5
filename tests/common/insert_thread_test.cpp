// Batches run on an insert thread: rows read back as if one thread had
// written them in order, whatever else uses the connection meanwhile, and a
// batch's failure reaches the thread that builds rows, once.
#include <gtest/gtest.h>

#include "apptracer/insert_thread.h"
#include "apptracer/row_inserter.h"
#include "apptracer/row_reader.h"
#include "apptracer/schema.h"

namespace apptracer {
namespace {

constexpr int64_t kBatch = static_cast<int64_t>(BatchInserter<MemcpyRow>::kMaxBatchRows);

Database create_schema(InsertThread& thread) {
  Database db(":memory:", Database::Mode::Create);
  with_transaction(db, [&] { db.exec(trace_schema_sql()); });
  db.use_insert_thread(&thread);
  return db;
}

MemcpyRow copy_of(int64_t i) {
  MemcpyRow row;
  row.id = i + 1;
  row.kind = i % 5 == 0 ? CopyKind::DtoH : CopyKind::HtoD;
  row.bytes = i % 3;
  if (i % 11 != 0) row.dst_alloc_id = i;
  row.gpu_start_ns = i;
  return row;
}

int64_t count(Database& db, const std::string& table) {
  Statement query = db.prepare("SELECT COUNT(*) FROM " + table);
  query.step();
  return query.int64(0);
}

// Many more batches than the slots a table has, two tables interleaved, and
// direct inserts and reads between them: every row, in order, with its values.
TEST(InsertThread, RowsReadBackInOrderWhateverElseUsesTheConnection) {
  InsertThread thread;
  Database db = create_schema(thread);
  BatchInserter<MemcpyRow> copies(db);
  BatchInserter<SyncRow> syncs(db);
  RowInserter<MetaRow> meta(db);
  const int64_t rows = 40 * kBatch + 17;
  with_transaction(db, [&] {
    for (int64_t i = 0; i < rows; ++i) {
      copies.add(copy_of(i));
      SyncRow sync;
      sync.start_ns = i;
      syncs.add(sync);
      if (i % (7 * kBatch) == 3) {
        MetaRow row;
        row.key = TextKey("at " + std::to_string(i));
        row.value = std::to_string(i);
        meta.insert(row);
        // A read waits for every batch handed over before it.
        EXPECT_EQ(count(db, "memcpys"), i / kBatch * kBatch);
      }
    }
    copies.flush();
    syncs.flush();
  });
  int64_t i = 0;
  for_each_row<MemcpyRow>(db, "ORDER BY id", [&](const MemcpyRow& row) {
    MemcpyRow expected = copy_of(i++);
    EXPECT_EQ(row.id.value, expected.id.value);
    EXPECT_EQ(row.kind, expected.kind) << "row " << i - 1;
    EXPECT_EQ(row.bytes, expected.bytes) << "row " << i - 1;
    EXPECT_EQ(row.dst_alloc_id, expected.dst_alloc_id) << "row " << i - 1;
    EXPECT_EQ(row.gpu_start_ns, expected.gpu_start_ns) << "row " << i - 1;
  });
  EXPECT_EQ(i, rows);
  int64_t next_start = 0;
  for_each_row<SyncRow>(db, "ORDER BY id", [&](const SyncRow& row) {
    EXPECT_EQ(row.start_ns, next_start++);
  });
  EXPECT_EQ(next_start, rows);
  EXPECT_EQ(count(db, "meta WHERE key LIKE 'at %'"), (rows - 4) / (7 * kBatch) + 1);
}

// A batch that fails (a repeated id) is reported on the next use of the
// connection, once; the batches behind it are dropped, and the connection
// goes on after the transaction is rolled back.
TEST(InsertThread, ABatchsFailureReachesTheNextUseOnceAndDropsWhatFollows) {
  InsertThread thread;
  Database db = create_schema(thread);
  BatchInserter<MemcpyRow> copies(db);
  db.exec("BEGIN");
  for (int64_t i = 0; i < kBatch; ++i) copies.add(copy_of(i));
  for (int64_t i = 0; i < 3 * kBatch; ++i) copies.add(copy_of(i % kBatch));
  EXPECT_THROW(db.exec("COMMIT"), SqliteError);
  db.exec("ROLLBACK");
  EXPECT_EQ(count(db, "memcpys"), 0);
  with_transaction(db, [&] {
    for (int64_t i = 0; i < 2 * kBatch; ++i) copies.add(copy_of(i));
  });
  EXPECT_EQ(count(db, "memcpys"), 2 * kBatch);
}

TEST(InsertThread, StopsAndStartsAgainOnTheNextBatch) {
  InsertThread thread;
  Database db = create_schema(thread);
  BatchInserter<MemcpyRow> copies(db);
  with_transaction(db, [&] {
    for (int64_t i = 0; i < kBatch; ++i) copies.add(copy_of(i));
  });
  thread.stop();
  with_transaction(db, [&] {
    for (int64_t i = kBatch; i < 3 * kBatch; ++i) copies.add(copy_of(i));
  });
  EXPECT_TRUE(thread.settle(std::chrono::milliseconds(0)));
  EXPECT_EQ(count(db, "memcpys"), 3 * kBatch);
}

}  // namespace
}  // namespace apptracer
