// A trace store on a file of its own per test, in a directory removed
// afterwards.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "buffer/allocation_registry.h"
#include "buffer/string_table.h"
#include "scratch_dir.h"
#include "store/trace_store.h"

namespace apptracer {

class StoreFixture : public ::testing::Test {
 protected:
  explicit StoreFixture(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    path_ = scratch_ / (prefix_ + ".db");
    store_ = std::make_unique<TraceStore>(path_, registry_, strings_);
  }
  void TearDown() override { store_.reset(); }

  testing::ScratchDir scratch_;
  std::string prefix_;
  std::string path_;
  AllocationRegistry registry_;
  StringTable strings_;
  std::unique_ptr<TraceStore> store_;
};

}  // namespace apptracer
