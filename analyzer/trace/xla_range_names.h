// What XLA's own NVTX range names say of the work inside them: a JAX
// program's framework context, as PyTorch's module and op ranges are
// PyTorch's (framework_context.h).
//
//   XlaModule:#hlo_module=jit_train_step,program_id=7#   an executable run:
//       the jitted function, jit_train_step
//   Thunk:#name=jit(train_step)/transpose(jvp(CNN))/Conv_1/conv_general_dilated,
//          hlo_op=cudnn-conv-bw-input.2,unique_hlo_op_id=9#   one of its ops:
//       the flax module path (CNN/Conv_1), its pass (transpose: backward;
//       jvp alone: forward) and the primitive (conv_general_dilated)
//   Thunk:#hlo_op=command_buffer_1#   an op with no source path (a command
//       buffer, a copy): its HLO op
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analyzer/trace/framework_context.h"

namespace apptracer::trace {

struct XlaRange {
  enum class Kind { Executable, Thunk };
  Kind kind = Kind::Thunk;
  std::string name;    // the jitted function, or the op (primitive, else HLO op)
  std::string module;  // a thunk's module path; empty where its name has none
  ModulePhase phase = ModulePhase::None;  // a thunk's: forward, backward or none
};

// None for a name that is neither an executable's nor a thunk's.
std::optional<XlaRange> parse_xla_range(std::string_view name);

}  // namespace apptracer::trace
