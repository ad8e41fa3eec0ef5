// A trace store on a file of its own per test (named after the test, so
// ctest's parallel processes never share one), removed afterwards.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "buffer/allocation_registry.h"
#include "buffer/string_table.h"
#include "store/trace_store.h"

namespace apptracer {

class StoreFixture : public ::testing::Test {
 protected:
  explicit StoreFixture(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    path_ = ::testing::TempDir() + prefix_ + "-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    unlink(path_.c_str());
    store_ = std::make_unique<TraceStore>(path_, registry_, strings_);
  }
  void TearDown() override {
    store_.reset();
    unlink(path_.c_str());
  }

  std::string prefix_;
  std::string path_;
  AllocationRegistry registry_;
  StringTable strings_;
  std::unique_ptr<TraceStore> store_;
};

}  // namespace apptracer
