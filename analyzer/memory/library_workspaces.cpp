#include "analyzer/memory/library_workspaces.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace apptracer::memory {

namespace {

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

bool has_any(const std::string& text, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view part) { return has(text, part); });
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// NVIDIA's precompiled GEMMs are named for the architecture they were built
// for: "ampere_sgemm_128x64_tn", "sm80_xmma_gemm_...".
bool architecture_gemm(const std::string& name) {
  std::string_view start = name;
  if (start.rfind("void ", 0) == 0) start.remove_prefix(5);
  for (std::string_view arch : {"maxwell_", "volta_", "turing_", "ampere_", "hopper_", "blackwell_"}) {
    if (start.rfind(arch, 0) == 0) return has(name, "gemm");
  }
  if (start.size() > 2 && start.substr(0, 2) == "sm" && std::isdigit(static_cast<unsigned char>(start[2])))
    return has(name, "gemm");
  return false;
}

}  // namespace

std::optional<Owner> kernel_library(std::string_view kernel_name) {
  std::string name = lower(kernel_name);
  // The framework's and compilers' own kernels, whatever they are named for.
  if (has_any(name, {"at::native", "at::cuda", "triton", "fmha", "flash"})) return std::nullopt;
  // cuDNN first: its convolutions are implicit GEMMs.
  if (has_any(name, {"cudnn", "_fprop", "_dgrad", "_wgrad", "convolve", "winograd", "fft2d_", "im2col4d"}))
    return Owner::CudnnWorkspace;
  if (has_any(name, {"cublas", "nvjet", "splitkreduce", "gemv2", "gemvnsp", "gemmsn_", "gemmk1_"}) ||
      (has(name, "cutlass") && has(name, "gemm")) || architecture_gemm(name))
    return Owner::CublasWorkspace;
  return std::nullopt;
}

std::optional<Owner> op_library(std::string_view op_name) {
  std::string name = lower(op_name);
  if (has(name, "cudnn") || name == "aten::convolution_backward" || name == "aten::_convolution" ||
      name == "aten::convolution")
    return Owner::CudnnWorkspace;
  static constexpr std::array<std::string_view, 13> kMatrixProducts = {
      "aten::mm",     "aten::addmm",  "aten::bmm",   "aten::baddbmm", "aten::addbmm",
      "aten::addmv",  "aten::mv",     "aten::dot",   "aten::vdot",    "aten::_addmm_activation",
      "aten::_scaled_mm", "aten::_int_mm", "aten::matmul"};
  if (std::find(kMatrixProducts.begin(), kMatrixProducts.end(), name) != kMatrixProducts.end())
    return Owner::CublasWorkspace;
  return std::nullopt;
}

}  // namespace apptracer::memory
