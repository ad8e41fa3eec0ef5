// Kernel names shortened for display: template arguments reduced to the
// one that tells kernels of one template apart, return type and parameters
// dropped, anonymous namespaces kept.
#include "analyzer/trace/short_names.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace apptracer::trace {
namespace {

TEST(ShortKernelName, KeepsTheFunctorAndDropsReturnTypeAndParameters) {
  EXPECT_EQ(short_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                              "at::native::FillFunctor<int>, std::array<char*, 1ul> >(int, "
                              "at::native::FillFunctor<int>, std::array<char*, 1ul>)"),
            "at::native::vectorized_elementwise_kernel<FillFunctor<int>>");
}

// The kernels of one launch-bound PyTorch training step (an H200 trace of a
// small CNN): each template's instances told apart by what they compute,
// the innermost function object or the function a lambda was written in.
TEST(ShortKernelName, TellsInstancesOfOneTemplateApart) {
  std::vector<std::pair<std::string, std::string>> names = {
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> "
       ">(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
       "at::native::vectorized_elementwise_kernel<FillFunctor<float>>"},
      {"void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>, "
       "std::array<char*, 1ul> >(int, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul>)",
       "at::native::vectorized_elementwise_kernel<FillFunctor<BFloat16>>"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, "
       "3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
       "at::native::vectorized_elementwise_kernel<CUDAFunctor_add<float>>"},
      {"void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda(at::"
       "TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::bfloat16_copy_kernel_"
       "cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul>)",
       "at::native::vectorized_elementwise_kernel<bfloat16_copy_kernel_cuda>"},
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
       "::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, "
       "2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
       "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, ...)",
       "at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda>"},
      {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BUnaryFunctor<"
       "c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >"
       "(at::TensorIteratorBase&, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
       "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, ...)",
       "at::native::elementwise_kernel<MulFunctor<float>>"},
      {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<"
       "c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::(anonymous namespace)::threshold_kernel_impl<"
       "c10::BFloat16>(at::TensorIteratorBase&, c10::BFloat16, c10::BFloat16)::"
       "{lambda(c10::BFloat16, c10::BFloat16)#1}> >(at::TensorIteratorBase&, at::native::BinaryFunctor<"
       "c10::BFloat16, c10::BFloat16, "
       "c10::BFloat16, at::native::(anonymous namespace)::threshold_kernel_impl<c10::BFloat16>(at::"
       "TensorIteratorBase&, c10::BFloat16, c10::BFloat16)::{lambda(c10::BFloat16, c10::BFloat16)#1}> const&)"
       "::{lambda(int)#1}>(int, ...)",
       "at::native::elementwise_kernel<threshold_kernel_impl>"},
      {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_"
       "kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
       "const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::"
       "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::"
       "{lambda(float)#1} const&)::{lambda(int)#1}>(int, ...)",
       "at::native::elementwise_kernel<direct_copy_kernel_cuda>"},
      {"void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, at::native::MeanOps<"
       "c10::BFloat16, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4, 8> >(at::native::ReduceOp<"
       "c10::BFloat16, at::native::MeanOps<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, "
       "c10::BFloat16, 4, 8>)",
       "at::native::reduce_kernel<MeanOps<...>>"},
      {"void at::native::reduce_kernel<256, 2, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<"
       "c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::"
       "TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(...)",
       "at::native::reduce_kernel<sum_functor>"},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, "
       "std::plus<float>, float>(...)",
       "at::native::(anonymous namespace)::multi_tensor_apply_kernel<BinaryOpListAlphaFunctor<float>>"},
      {"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<unsigned int, 4, "
       "at::native::templates::cuda::random_from_to_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, "
       "unsigned long, long, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#4}::operator()"
       "() const::{lambda(curandStatePhilox4_32_10*)#2}, at::native::(anonymous namespace)::distribution_nullary_"
       "kernel<long, unsigned int, uint4, at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, at::CUDAGenerator"
       "Impl*)::{lambda(int, unsigned int)#1}>(long, at::PhiloxCudaState)",
       "at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<random_from_to_kernel>"},
      {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align2>("
       "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align2::Params)",
       "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align2>"},
      {"void at::native::batch_norm_collect_statistics_channels_last_kernel<at::native::Var, c10::BFloat16, "
       "float, 4>(c10::BFloat16 const*, float*, float*, float volatile*, int*, int, int, float)",
       "at::native::batch_norm_collect_statistics_channels_last_kernel<Var>"},
  };
  for (const auto& [whole, shown] : names) EXPECT_EQ(short_kernel_name(whole), shown) << whole;
}

// Only numbers and number types: nothing tells more than the name.
TEST(ShortKernelName, ElidesArgumentsThatAreOnlyNumbersAndTypes) {
  EXPECT_EQ(short_kernel_name("void nhwcAddPaddingKernel<__nv_bfloat16, __nv_bfloat16, float, true, "
                              "(cudnnKernelDataType_t)0>(int, int, __nv_bfloat16 const*, __nv_bfloat16*)"),
            "nhwcAddPaddingKernel<...>");
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
