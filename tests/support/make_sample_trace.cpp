// Writes the sample trace (with its DVDG tables) to the path given, for tests
// outside C++ (perfetto_decode_test.py).
#include <cstdio>

#include "sample_trace.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_sample_trace OUTPUT.db\n");
    return 2;
  }
  std::remove(argv[1]);
  apptracer::testing::TraceBuilder builder(argv[1]);
  apptracer::testing::SampleIds ids = apptracer::testing::build_sample_trace(builder);
  apptracer::testing::add_sample_dvdg(builder.db(), ids);
  return 0;
}
