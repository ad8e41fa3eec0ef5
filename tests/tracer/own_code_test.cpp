// Telling a crash in the tracer's own code from the program's: the loaded
// object holding a function, and the one line a fault there prints.
#include "base/own_code.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace apptracer {
namespace {

int here() { return 42; }

TEST(OwnCode, HoldsItsOwnFunctionsAndNotLibcs) {
  OwnCode code = own_code_of(reinterpret_cast<const void*>(&here));
  ASSERT_LT(code.begin, code.end);
  EXPECT_TRUE(code.contains(reinterpret_cast<uintptr_t>(&here)));
  EXPECT_FALSE(code.contains(reinterpret_cast<uintptr_t>(&::write)));
  EXPECT_GT(std::strlen(code.name), 0u);
  EXPECT_EQ(std::strchr(code.name, '/'), nullptr);
}

TEST(OwnCode, AFaultIsOneLineNamingTheObjectAndOffset) {
  OwnCode code;
  code.base = 0x7f0000000000;
  std::strcpy(code.name, "libapptracer.so");
  char line[256];
  size_t length = describe_own_fault(line, sizeof line, SIGSEGV, code, 0x7f00000bff4c);
  EXPECT_EQ(std::string(line, length),
            "apptracer: SIGSEGV in apptracer's own code (libapptracer.so+0xbff4c), not the program's: "
            "please report it with this line; what was recorded is written\n");
  char short_line[24];
  length = describe_own_fault(short_line, sizeof short_line, SIGBUS, code, 0x7f0000000010);
  EXPECT_EQ(length, sizeof short_line - 1);
  EXPECT_EQ(std::string(short_line), "apptracer: SIGBUS in ap");
}

}  // namespace
}  // namespace apptracer
