// `apptracer query`: reads anything, refuses every statement that writes, and
// leaves the trace file byte for byte as it was.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "report_test_helpers.h"
#include "sample_trace.h"
#include "scratch_dir.h"
#include "analyzer/query/sql_query.h"
#include "analyzer/trace/trace_file.h"

namespace apptracer::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Query : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = scratch_ / "query_test.db";
    TraceBuilder builder(path_);
    build_sample_trace(builder);
  }
  ScratchDir scratch_;
  std::string path_;
};

TEST_F(Query, ReturnsRowsWithColumnNamesAndTypes) {
  Database db = open_trace(path_, TraceAccess::ReadOnly);
  Table table = run_read_only_query(
      db, "SELECT kind, count(*) AS n, sum(bytes) * 1.0 AS total, NULL AS absent "
          "FROM memcpys GROUP BY kind ORDER BY kind");
  ASSERT_EQ(table.columns, (std::vector<std::string>{"kind", "n", "total", "absent"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(integer(table, 0, "kind"), 1);
  EXPECT_EQ(integer(table, 0, "n"), 2);
  EXPECT_DOUBLE_EQ(real(table, 0, "total"), 13000.0);
  EXPECT_TRUE(is_null(table, 0, "absent"));
}

TEST_F(Query, JoinsStringsAndAllowsWithClauses) {
  Database db = open_trace(path_, TraceAccess::ReadOnly);
  Table table = run_read_only_query(
      db, "WITH k AS (SELECT demangled_id FROM kernels WHERE stream = 8) "
          "SELECT s.text FROM k JOIN strings s ON s.id = k.demangled_id;");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(text(table, 0, "text"), "vec_add(float*, float*)");
}

TEST_F(Query, RefusesEveryWritingStatementAndLeavesTheFileUnchanged) {
  std::string before = read_file(path_);
  Database db = open_trace(path_, TraceAccess::ReadOnly);
  for (const char* sql :
       {"DELETE FROM kernels", "UPDATE meta SET value = 'x' WHERE key = 'status'",
        "INSERT INTO strings(text) VALUES ('x')", "DROP TABLE kernels",
        "CREATE TABLE extra (x)", "CREATE TEMP TABLE scratch (x)", "PRAGMA user_version = 5",
        "VACUUM", "REPLACE INTO meta VALUES ('a', 'b')"}) {
    try {
      run_read_only_query(db, sql);
      ADD_FAILURE() << "not refused: " << sql;
    } catch (const QueryError& error) {
      EXPECT_NE(std::string(error.what()).find("refused"), std::string::npos)
          << sql << ": " << error.what();
    }
  }
  db.close();
  EXPECT_EQ(read_file(path_), before);
}

TEST_F(Query, RefusesSeveralStatementsAndReportsInvalidSql) {
  Database db = open_trace(path_, TraceAccess::ReadOnly);
  EXPECT_THROW(run_read_only_query(db, "SELECT 1; DELETE FROM kernels"), QueryError);
  EXPECT_THROW(run_read_only_query(db, "SELEKT 1"), QueryError);
  EXPECT_THROW(run_read_only_query(db, "   "), QueryError);
  EXPECT_EQ(run_read_only_query(db, "SELECT 1 ;  ").rows.size(), 1u);
}

}  // namespace
}  // namespace apptracer::testing
