#include "base/config.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <vector>

#include "buffer/allocation_registry.h"
#include "scratch_dir.h"

namespace apptracer {
namespace {

TEST(OutputPath, ExpandsPidHostAndPercent) {
  EXPECT_EQ(expand_output_path("t-%p-%h-100%%.db", 42, "node1"), "t-42-node1-100%.db");
  EXPECT_EQ(expand_output_path("plain.db", 1, "h"), "plain.db");
  EXPECT_EQ(expand_output_path("odd%x%", 1, "h"), "odd%x%");
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(OutputPath, ClaimsAFreeNameElseOneWithThePid) {
  testing::ScratchDir scratch;
  std::string stem = scratch / "claim";
  std::ofstream(stem + ".db") << "x";
  EXPECT_EQ(claim_output_path(stem + ".db", 77).path, stem + "-77.db");
  EXPECT_EQ(claim_output_path(stem + ".db", 77).path, stem + "-77-1.db");
  EXPECT_EQ(file_text(stem + ".db"), "x") << "never written over";
  EXPECT_EQ(file_text(stem + "-77.db"), "") << "claimed files are created empty";
  for (const char* suffix : {".db", "-77.db", "-77-1.db"}) unlink((stem + suffix).c_str());
  EXPECT_EQ(claim_output_path(stem + ".db", 77).path, stem + ".db");
}

TEST(OutputPath, ProcessesStartingTogetherGetAFileEach) {
  testing::ScratchDir scratch;
  std::string path = scratch / "together.db";
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  constexpr int kProcesses = 8;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t child = fork();
    if (child == 0) {
      char byte;
      close(go[1]);
      if (read(go[0], &byte, 1) != 0) _exit(2);  // all start at once, when the pipe closes
      std::string claimed = claim_output_path(path, getpid()).path;
      std::ofstream(claimed) << getpid();
      _exit(0);
    }
    children.push_back(child);
  }
  close(go[0]);
  close(go[1]);
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::set<std::string> owners;
  std::vector<std::string> files{path};
  for (pid_t child : children) {
    files.push_back(path.substr(0, path.size() - 3) + "-" + std::to_string(child) + ".db");
  }
  for (const std::string& file : files) {
    if (access(file.c_str(), F_OK) != 0) continue;
    owners.insert(file_text(file));
  }
  EXPECT_EQ(owners.size(), static_cast<size_t>(kProcesses)) << "each process wrote its own file";
}

TEST(OutputPath, AnUncreatableFileIsAnError) {
  EXPECT_THROW(claim_output_path("/nonexistent-directory/t.db", 1), std::runtime_error);
}

// The configuration with APPTRACER_FRAMEWORK_CONTEXT and one more variable
// set as given (null: unset), both unset again after.
Config config_with_context(const char* context, const char* variable = nullptr, const char* value = nullptr) {
  if (context) setenv("APPTRACER_FRAMEWORK_CONTEXT", context, 1);
  if (variable && value) setenv(variable, value, 1);
  Config config = Config::from_environment();
  unsetenv("APPTRACER_FRAMEWORK_CONTEXT");
  if (variable) unsetenv(variable);
  return config;
}

// APPTRACER_FRAMEWORK_CONTEXT=sampled, the default, records 1 in
// APPTRACER_OP_SAMPLE_EVERY ops (16 unless set); every other mode records
// every op it records at all.
TEST(FrameworkContextConfig, SampledRecordsOneOpInN) {
  auto sample_every = [](const char* context, const char* every) {
    return config_with_context(context, "APPTRACER_OP_SAMPLE_EVERY", every).op_sample_every;
  };
  EXPECT_EQ(sample_every("sampled", nullptr), 16u);
  EXPECT_EQ(sample_every("sampled", "4"), 4u);
  EXPECT_EQ(sample_every("sampled", "0"), 16u) << "not a count: the default";
  EXPECT_EQ(sample_every("on", "4"), 1u);
  EXPECT_EQ(sample_every("all", nullptr), 1u);
  EXPECT_EQ(sample_every(nullptr, nullptr), 16u) << "unset: sampled";
  EXPECT_EQ(sample_every(nullptr, "4"), 4u);
}

// Sampling begins after APPTRACER_OP_SAMPLE_AFTER ops, each recorded (8192
// unless set; 0: from the first op); unsampled modes have nothing to begin.
TEST(FrameworkContextConfig, SamplingBeginsAfterTheFirstOps) {
  auto sample_after = [](const char* context, const char* after) {
    return config_with_context(context, "APPTRACER_OP_SAMPLE_AFTER", after).op_sample_after;
  };
  EXPECT_EQ(sample_after(nullptr, nullptr), 8192u);
  EXPECT_EQ(sample_after("sampled", "100"), 100u);
  EXPECT_EQ(sample_after("sampled", "0"), 0u) << "zero: sampled from the first op";
  EXPECT_EQ(sample_after("sampled", "-1"), 8192u) << "not a count: the default";
  EXPECT_EQ(sample_after("on", "100"), 0u);
}

TEST(FrameworkContextConfig, UnsetIsSampledAndAnUnknownModeIsTheDefault) {
  auto context = [](const char* mode) {
    Config config = config_with_context(mode);
    return std::string(config.framework_context) + (config.every_framework_range ? "+every" : "");
  };
  EXPECT_EQ(context(nullptr), "sampled");
  EXPECT_EQ(context("off"), "off");
  EXPECT_EQ(context("modules"), "modules");
  EXPECT_EQ(context("all"), "all+every");
  EXPECT_EQ(context("ops"), "sampled");
}

TEST(AllocationRegistry, FindsTheAllocationLiveAtATime) {
  AllocationRegistry registry;
  uint64_t big = registry.add(0x1000, 0x1000, AllocKind::Device, 0, 10);
  registry.remove(0x1000, 20);
  uint64_t small = registry.add(0x1800, 0x10, AllocKind::Device, 0, 30);
  EXPECT_EQ(registry.find(0x1900, 15)->id, big) << "interior pointer, older lifetime";
  EXPECT_FALSE(registry.find(0x1900, 35).has_value()) << "freed by then";
  EXPECT_EQ(registry.find(0x1808, 35)->id, small);
  EXPECT_FALSE(registry.find(0x1808, 25).has_value()) << "not yet allocated";
  EXPECT_FALSE(registry.find(0x0fff, 15).has_value());
}

TEST(AllocationRegistry, ForgetsOnlyWhatWasFreedBeforeTheCutoff) {
  AllocationRegistry registry;
  registry.add(0x1000, 0x100, AllocKind::Device, 0, 10);
  registry.remove(0x1000, 20);
  registry.add(0x2000, 0x100, AllocKind::Device, 0, 30);
  registry.remove(0x2000, 40);
  registry.add(0x3000, 0x100, AllocKind::Device, 0, 50);
  registry.forget_freed_before(35);
  EXPECT_FALSE(registry.find(0x1010, 15).has_value()) << "freed at 20: forgotten";
  EXPECT_TRUE(registry.find(0x2010, 35).has_value()) << "freed at 40: kept";
  EXPECT_TRUE(registry.find(0x3010, 60).has_value()) << "live: kept";
}

TEST(AllocationRegistry, UnresolvableAllocationsAreRemovedByKey) {
  AllocationRegistry registry;
  uint64_t id = registry.add_unresolvable(AllocKind::VmmPhysical, 0xabc, 1);
  EXPECT_FALSE(registry.find(0xabc, 2).has_value());
  EXPECT_EQ(registry.remove_unresolvable(AllocKind::VmmPhysical, 0xabc), id);
  EXPECT_FALSE(registry.remove_unresolvable(AllocKind::VmmPhysical, 0xabc).has_value());
}

}  // namespace
}  // namespace apptracer
