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

TEST(Schema, CreatesEveryContractTable) {
  Database db = create_schema();
  for (const char* table :
       {"meta", "strings", "enum_values", "devices", "threads", "api_calls", "allocations",
        "memcpys", "memsets", "kernels", "kernel_args", "syncs", "stream_events", "um_events",
        "mem_advice", "nvtx_ranges"}) {
    EXPECT_TRUE(db.has_table(table)) << table;
  }
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
