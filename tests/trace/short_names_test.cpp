// Kernel names shortened for display: template arguments elided, return
// type and parameters dropped, anonymous namespaces kept.
#include "analyzer/trace/short_names.h"

#include <gtest/gtest.h>

namespace apptracer::trace {
namespace {

TEST(ShortKernelName, ElidesTemplateArgumentsAndDropsReturnTypeAndParameters) {
  EXPECT_EQ(short_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                              "at::native::FillFunctor<int>, std::array<char*, 1ul> >(int, "
                              "at::native::FillFunctor<int>, std::array<char*, 1ul>)"),
            "at::native::vectorized_elementwise_kernel<...>");
}

TEST(ShortKernelName, KeepsAnonymousNamespacesAndPlainNames) {
  EXPECT_EQ(short_kernel_name("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, "
                              "float>(float*, float const*, int)"),
            "at::native::(anonymous namespace)::cunn_SoftMaxForward<...>");
  EXPECT_EQ(short_kernel_name("vector_add(float const*, float const*, float*, int)"), "vector_add");
  EXPECT_EQ(short_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32"), "sm90_xmma_gemm_bf16bf16_bf16f32");
  EXPECT_EQ(short_kernel_name("HtoD copy of 4 MiB"), "HtoD copy of 4 MiB");
}

TEST(ShortKernelName, CutsWhatIsStillTooLong) {
  std::string name(300, 'k');
  std::string shown = short_kernel_name(name, 40);
  EXPECT_EQ(shown.size(), 40u);
  EXPECT_EQ(shown.substr(37), "...");
}

}  // namespace
}  // namespace apptracer::trace
