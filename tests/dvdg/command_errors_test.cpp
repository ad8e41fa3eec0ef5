// Every way a trace file can be wrong gives one clear line and a non-zero
// exit; a trace is never modified unless the graph is stored.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "command_runner.h"
#include "apptracer/schema.h"
#include "dvdg_fixture.h"

namespace apptracer::dvdg {
namespace {

class BrokenTrace : public DvdgTest {
 public:
  // A valid vector-add trace, closed, as bytes.
  std::string valid_trace_bytes() {
    add_vector_add(*this);
    trace_.reset();
    return read_file(path_);
  }
  void write(const std::string& bytes) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
  }

  // Runs dvdg and checks for exactly one line of error naming the file.
  void expect_one_line_error(const std::string& arguments, const std::string& says) {
    CommandOutput result = run_apptracer("dvdg " + arguments);
    EXPECT_NE(result.exit_code, 0);
    EXPECT_EQ(result.err.rfind("apptracer: " + path_ + ": ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find(says), std::string::npos) << result.err;
    ASSERT_FALSE(result.err.empty());
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
};

TEST_F(BrokenTrace, MissingFile) {
  trace_.reset();
  std::remove(path_.c_str());
  expect_one_line_error(path_, "no such file");
}

TEST_F(BrokenTrace, EmptyFile) {
  trace_.reset();
  write("");
  expect_one_line_error(path_, "empty: the process ended before its trace began");
}

TEST_F(BrokenTrace, NotSqlite) {
  trace_.reset();
  write("kernel,stream,start\nvector_add,7,100\n");
  expect_one_line_error(path_, "not an SQLite database");
}

TEST_F(BrokenTrace, Truncated) {
  std::string bytes = valid_trace_bytes();
  write(bytes.substr(0, bytes.size() / 3));
  expect_one_line_error(path_, "damaged or");
}

TEST_F(BrokenTrace, Corrupted) {
  std::string bytes = valid_trace_bytes();
  // Keep the header page, scramble every page after it.
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + 7);
  write(bytes);
  expect_one_line_error(path_, "damaged");
}

TEST_F(BrokenTrace, NewerSchema) {
  trace_->set_meta("schema_version", "999");
  trace_.reset();
  expect_one_line_error(path_, "newer than this apptracer understands");
}

// A hand-edited meta keeps its meaning: white space around the number.
TEST_F(BrokenTrace, SchemaVersionWithWhiteSpaceAroundIsTheNumber) {
  add_vector_add(*this);
  trace_->set_meta("schema_version", " " + std::to_string(kSchemaVersion) + "\n");
  trace_.reset();
  CommandOutput result = run_apptracer("dvdg --no-store " + path_);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  {
    Database db(path_, Database::Mode::ReadWrite);
    db.exec("UPDATE meta SET value = '4x' WHERE key = 'schema_version'");
  }
  expect_one_line_error("--no-store " + path_, "meta.schema_version is '4x', not a version number");
}

TEST_F(BrokenTrace, ReadOnlyTraceCannotStoreTheGraphButCanExport) {
  std::string bytes = valid_trace_bytes();
  chmod(path_.c_str(), 0444);
  if (access(path_.c_str(), W_OK) == 0)
    GTEST_SKIP() << "running as root: files are always writable";
  expect_one_line_error(path_, "--no-store");
  CommandOutput result = run_apptracer("dvdg --no-store " + path_);
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST_F(BrokenTrace, NoStoreLeavesTheFileByteForByteUnchanged) {
  std::string bytes = valid_trace_bytes();
  std::string json = scratch_ / "nostore.json";
  CommandOutput result =
      run_apptracer("dvdg --no-store " + path_ + " --json " + json + " --why v1");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(read_file(path_), bytes);
}

TEST_F(BrokenTrace, StoringAddsOnlyTheDvdgTables) {
  valid_trace_bytes();
  CommandOutput result = run_apptracer("dvdg " + path_);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "dvdg: 10 operations, 10 values, 5 edges; stored in " + path_ +
                            " (dvdg_ops, dvdg_values, dvdg_edges)\n");
  Database db(path_, Database::Mode::ReadOnly);
  for (const char* table : {"dvdg_ops", "dvdg_values", "dvdg_op_values", "dvdg_listed_edges"})
    EXPECT_TRUE(db.has_table(table));
  Statement edges = db.prepare("SELECT count(*) FROM dvdg_edges");
  ASSERT_TRUE(edges.step());
  EXPECT_EQ(edges.int64(0), 5);
}

}  // namespace
}  // namespace apptracer::dvdg
