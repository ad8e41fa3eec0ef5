// SQLite files the tracer opens lie above the program's descriptor numbers;
// the program's own SQLite use (the same library) is left alone.
#include "store/high_descriptors.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "apptracer/sqlite.h"
#include "base/inside_tracer.h"

namespace apptracer {
namespace {

// The descriptors this process holds on `path`.
std::vector<int> descriptors_of(const std::string& path) {
  std::vector<int> found;
  for (int fd = 0; fd < 4096; ++fd) {
    char target[PATH_MAX];
    ssize_t n = readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (path == target) found.push_back(fd);
  }
  return found;
}

class HighDescriptorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(keep_sqlite_descriptors_high());
    char resolved[PATH_MAX];
    ASSERT_NE(realpath(::testing::TempDir().c_str(), resolved), nullptr);
    path_ = std::string(resolved) + "/high-descriptors-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path_ + suffix).c_str());
  }
  std::string path_;
};

TEST_F(HighDescriptorsTest, TheTracersFilesOpenAboveTheFloor) {
  InsideTracer inside;
  Database db(path_, Database::Mode::Create);
  db.exec("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1)");
  std::vector<int> fds = descriptors_of(path_);
  ASSERT_FALSE(fds.empty());
  for (int fd : fds) EXPECT_GE(fd, tracer_descriptor_floor());
  for (int fd : descriptors_of(path_ + "-wal")) EXPECT_GE(fd, tracer_descriptor_floor()) << "the WAL";
}

TEST_F(HighDescriptorsTest, TheProgramsOwnSqliteKeepsItsNumbers) {
  Database db(path_, Database::Mode::Create);
  db.exec("CREATE TABLE t(x)");
  std::vector<int> fds = descriptors_of(path_);
  ASSERT_FALSE(fds.empty());
  for (int fd : fds) EXPECT_LT(fd, tracer_descriptor_floor());
}

}  // namespace
}  // namespace apptracer
