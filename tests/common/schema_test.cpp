#include "apptracer/schema.h"

#include <gtest/gtest.h>

#include "apptracer/sqlite.h"

namespace apptracer {
namespace {

Database create_schema() {
  Database db(":memory:", Database::Mode::Create);
  with_transaction(db, [&] { db.exec(trace_schema_sql()); });
  return db;
}

// The table names the trace contract makes public interface (docs/trace-contract.md).
TEST(Schema, CreatesEveryContractTable) {
  Database db = create_schema();
  for (const char* table :
       {"meta", "strings", "enum_values", "devices", "threads", "api_calls", "allocations",
        "memcpys", "memsets", "kernels", "syncs", "stream_events", "streams", "um_events", "mem_advice",
        "nvtx_ranges"}) {
    EXPECT_TRUE(db.has_table(table)) << table;
  }
  Statement view = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = ?");
  view.bind(1, std::string("kernel_args"));
  ASSERT_TRUE(view.step());
  EXPECT_EQ(view.int64(0), 1) << "kernel_args is a view over the argument sets";
}

TEST(Schema, RecordsItsVersion) {
  Database db = create_schema();
  Statement query = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  ASSERT_TRUE(query.step());
  EXPECT_EQ(query.text(0), std::to_string(kSchemaVersion));
}

TEST(Schema, EnumValuesAreReadableFromSql) {
  Database db = create_schema();
  Statement query = db.prepare(
      "SELECT name FROM enum_values WHERE enum = 'alloc_kind' AND value = 6");
  ASSERT_TRUE(query.step());
  EXPECT_EQ(query.text(0), "managed");
}

}  // namespace
}  // namespace apptracer
