#include "base/inside_tracer.h"

namespace apptracer {

__thread bool thread_inside_tracer __attribute__((tls_model("initial-exec"))) = false;

}  // namespace apptracer
