// A directory of a test's own under TMPDIR, removed with everything in it
// when it goes out of scope, also when the test fails: tests leave no file
// behind (the tmpdir.left_empty test checks).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace apptracer::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "apptracer-test-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a directory in " + pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // `name` inside it.
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace apptracer::testing
