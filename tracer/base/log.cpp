#include "base/log.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace apptracer {

namespace {

std::shared_ptr<spdlog::logger>& instance() {
  // Never destroyed: messages may be logged from atexit and signal paths.
  static auto* logger = new std::shared_ptr<spdlog::logger>(
      std::make_shared<spdlog::logger>("apptracer", std::make_shared<spdlog::sinks::stderr_sink_mt>()));
  return *logger;
}

}  // namespace

void init_logging(const std::string& level) {
  instance()->set_pattern("apptracer: %v");
  instance()->set_level(spdlog::level::from_str(level));
}

spdlog::logger& logger() { return *instance(); }

}  // namespace apptracer
