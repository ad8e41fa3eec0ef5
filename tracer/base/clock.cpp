#include "base/clock.h"

#include <cupti_activity.h>

namespace apptracer {

uint64_t now_ns() {
  uint64_t ns = 0;
  cuptiGetTimestamp(&ns);
  return ns;
}

}  // namespace apptracer
