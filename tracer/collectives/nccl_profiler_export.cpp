// The symbol NCCL looks for in the library NCCL_PROFILER_PLUGIN names (the
// preload constructor points it at libapptracer.so itself). Only the
// injected library carries it: a test linking it would be a plugin too.
#include "collectives/nccl_profiler.h"

extern "C" __attribute__((visibility("default"))) ncclProfiler_v5_t ncclProfiler_v5 = {
    "apptracer",
    apptracer::nccl::profiler_init,
    apptracer::nccl::profiler_start_event,
    apptracer::nccl::profiler_stop_event,
    apptracer::nccl::profiler_record_event_state,
    apptracer::nccl::profiler_finalize,
};
