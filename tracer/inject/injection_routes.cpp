// The routes that inject the tracer into a program. Two start it with the
// program: LD_PRELOAD (the constructor below runs at load) and
// CUDA_INJECTION64_PATH (the driver calls InitializeInjection during cuInit).
// Whichever fires first starts the tracer; the other finds it started. A
// third is in-process capture (apptracer_capture_start/stop, the Python
// package's apptracer.capture): the library is loaded by the program itself
// and attaches late, once, to a process already running CUDA. NVTX finds its
// tool through InitializeInjectionNvtx2.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "apptracer/output_path.h"
#include "apptracer/schema.h"
#include "base/config.h"
#include "capture/capture.h"
#include "inject/lifecycle.h"
#include "translate/nvtx_injection.h"

namespace apptracer::inject {

namespace {

__attribute__((constructor)) void start_when_preloaded() {
  // Only when preloaded: a library dlopen()ed through CUDA_INJECTION64_PATH
  // waits for InitializeInjection.
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::string(preload).find("libapptracer") != std::string::npos) {
    // Children started from another directory write where this process
    // does; an exec'd program gets it even from a program that execs with
    // an environment of its own (exit_exec.cpp).
    Config config = Config::from_environment();
    state.given_output = (new std::string(config.output))->c_str();
    config.output = absolute_output_path(config.output);
    state.exec_output_entry = (new std::string("APPTRACER_OUTPUT=" + config.output))->c_str();
    setenv("APPTRACER_OUTPUT", config.output.c_str(), 1);
    start(config);
  }
}

int capture_error(char* message, size_t message_bytes, const std::string& text) {
  if (message && message_bytes > 0) snprintf(message, message_bytes, "%s", text.c_str());
  return 1;
}

}  // namespace

}  // namespace apptracer::inject

// CUDA_INJECTION64_PATH entry point, called by the driver during cuInit.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  apptracer::inject::start(apptracer::Config::from_environment());
  return 1;
}

// In-process capture, for a program that loads this library itself (the
// Python package's apptracer.capture, through ctypes) rather than being
// preloaded. Starts recording into `path` (which must not exist) now: CUPTI
// subscription, activity, writer and file. Once per process: CUPTI's
// subscriber, the record buffers and the writer are not restarted after a
// stop. Returns 0, or 1 with one line in `message` saying why not.
extern "C" __attribute__((visibility("default"))) int apptracer_capture_start(
    const char* path, char* message, size_t message_bytes) {
  using namespace apptracer;
  using namespace apptracer::inject;
  std::lock_guard<std::mutex> lock(state.capture_mutex);
  if (state.started) {
    if (*state.not_tracing_reason) {
      return capture_error(message, message_bytes, state.not_tracing_reason);
    }
    if (state.attached_late) {
      return capture_error(message, message_bytes,
                           "a capture already ran in this process (one per process)");
    }
    return capture_error(message, message_bytes,
                         "this process is already traced (apptracer record or LD_PRELOAD): "
                         "its whole run is in that trace");
  }
  if (!path || !*path) return capture_error(message, message_bytes, "no output path given");
  if (access(path, F_OK) == 0) {
    return capture_error(message, message_bytes, std::string(path) + " exists");
  }
  Config config = Config::from_environment();
  config.output = path;
  state.attached_late = true;
  start(config);
  if (state.finished) return capture_error(message, message_bytes, state.not_tracing_reason);
  return 0;
}

// Ends the capture apptracer_capture_start began: flushes what CUPTI holds
// (forced), finishes the file (status complete, one file), then stops the
// callbacks and activity so the rest of the program runs untraced.
extern "C" __attribute__((visibility("default"))) int apptracer_capture_stop(char* message,
                                                                              size_t message_bytes) {
  using namespace apptracer;
  using namespace apptracer::inject;
  std::lock_guard<std::mutex> lock(state.capture_mutex);
  if (!state.attached_late) return capture_error(message, message_bytes, "no capture was started");
  if (state.finished) return capture_error(message, message_bytes, "the capture has already stopped");
  finish(kStatusComplete);
  unsubscribe_callbacks();
  if (state.activity_usable) disable_activity();
  return 0;
}

// NVTX_INJECTION64_PATH entry point, called by each NVTX instance at its first call.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) {
  return apptracer::initialize_nvtx_injection(get_export_table);
}
