// What the live CUDA queries remember of a launched function, by handle,
// and when they stop trusting it: once a module is unloaded the driver may
// hand its functions' handles to other functions (here no driver answers,
// so the runtime's name for a function is all it has).
#include "capture/live_cuda_queries.h"

#include <gtest/gtest.h>

#include "buffer/string_table.h"

namespace apptracer {
namespace {

TEST(LiveCudaQueries, AFunctionIsAskedOnceAndAgainAfterAnUnload) {
  StringTable strings;
  LiveCudaQueries queries(strings);
  int handle = 0;
  const LaunchedFunction& first = queries.function(&handle, "_Z5firstv");
  EXPECT_EQ(strings.text(first.name_id), "_Z5firstv");
  // The same handle: the answer kept, whatever name the runtime gives now.
  EXPECT_EQ(&queries.function(&handle, "_Z6secondv"), &first);
  queries.forget_functions();
  const LaunchedFunction& second = queries.function(&handle, "_Z6secondv");
  EXPECT_NE(&second, &first);
  EXPECT_EQ(strings.text(second.name_id), "_Z6secondv");
  // The first answer stays readable: another thread may be in its launch.
  EXPECT_EQ(strings.text(first.name_id), "_Z5firstv");
  EXPECT_EQ(&queries.function(&handle, "_Z5firstv"), &second);
}

}  // namespace
}  // namespace apptracer
