// The registry of traced functions (tracer/translate/traced_functions.def),
// checked against CUPTI's own list of callback ids: every enabled id has a
// handler and every handled id is enabled, flags agree with the names, and
// no variant of a traced function is left out.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "translate/traced_function.h"

namespace apptracer {
namespace {

// CUPTI's callback ids by name, read from its headers (CUPTI_INCLUDE_DIR).
std::map<std::string, int> cupti_ids(const std::string& header, const std::string& prefix) {
  std::ifstream in(std::string(CUPTI_INCLUDE_DIR) + "/" + header);
  EXPECT_TRUE(in) << header;
  std::map<std::string, int> ids;
  std::regex entry("\\s*" + prefix + "(\\w+)\\s*=\\s*(\\d+),");
  std::string line;
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_search(line, match, entry)) ids[match[1]] = std::stoi(match[2]);
  }
  return ids;
}

// A function's variants share this: the name without its per-thread-stream
// suffix and (runtime) without its version suffix.
std::string base_name(std::string name, bool runtime) {
  if (runtime) name = std::regex_replace(name, std::regex("_v\\d+$"), "");
  return std::regex_replace(name, std::regex("_pt(sz|ds)"), "");
}

bool per_thread_name(const std::string& name) {
  return name.find("_ptsz") != std::string::npos || name.find("_ptds") != std::string::npos;
}

TEST(TracedFunctions, EveryEntryIsCuptisIdOfThatNameWithAHandler) {
  auto runtime = cupti_ids("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_");
  auto driver = cupti_ids("cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_");
  ASSERT_GT(runtime.size(), 400u);
  ASSERT_GT(driver.size(), 600u);
  std::set<std::pair<int, CUpti_CallbackId>> seen;
  for (const TracedFunction& f : traced_functions()) {
    bool is_runtime = f.domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    auto& ids = is_runtime ? runtime : driver;
    ASSERT_TRUE(ids.count(f.name)) << f.name;
    EXPECT_EQ(static_cast<CUpti_CallbackId>(ids[f.name]), f.cbid) << f.name;
    EXPECT_NE(f.handler, nullptr) << f.name;
    EXPECT_TRUE(seen.insert({f.domain, f.cbid}).second) << f.name << " is declared twice";
    EXPECT_EQ(traced_function(f.domain, f.cbid), &f) << f.name;
  }
}

TEST(TracedFunctions, WhatIsEnabledIsExactlyWhatIsHandled) {
  std::set<std::pair<int, CUpti_CallbackId>> enabled, handled;
  for (const TracedCallback& c : traced_callbacks()) enabled.insert({c.domain, c.cbid});
  for (const TracedFunction& f : traced_functions()) handled.insert({f.domain, f.cbid});
  EXPECT_EQ(enabled, handled);
  EXPECT_EQ(traced_function(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020),
            nullptr)
      << "an untraced id has no entry";
}

TEST(TracedFunctions, FlagsAgreeWithTheNames) {
  for (const TracedFunction& f : traced_functions()) {
    std::string name = f.name;
    EXPECT_EQ(per_thread_name(name), (f.flags & kPerThread) != 0) << name;
    if (name.find("Async") != std::string::npos) EXPECT_TRUE(f.flags & kAsync) << name;
    // Stream-ordered without saying so in the name: launches and event ordering.
    if ((f.flags & kAsync) && name.find("Async") == std::string::npos) {
      EXPECT_TRUE(f.op == OpKind::Launch || f.op == OpKind::Event || f.op == OpKind::CallOnly)
          << name;
    }
  }
}

TEST(TracedFunctions, EveryVariantOfATracedFunctionIsTraced) {
  for (auto [header, prefix, domain] :
       {std::tuple{"cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_", CUPTI_CB_DOMAIN_RUNTIME_API},
        std::tuple{"cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_", CUPTI_CB_DOMAIN_DRIVER_API}}) {
    bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    std::set<std::string> traced_bases;
    for (const TracedFunction& f : traced_functions()) {
      if (f.domain == domain) traced_bases.insert(base_name(f.name, runtime));
    }
    for (const auto& [name, id] : cupti_ids(header, prefix)) {
      if (!traced_bases.count(base_name(name, runtime))) continue;
      EXPECT_NE(traced_function(domain, static_cast<CUpti_CallbackId>(id)), nullptr)
          << name << " is a variant of a traced function but is not traced";
    }
  }
}

}  // namespace
}  // namespace apptracer
