// One-line messages on stderr, prefixed "apptracer:", at the level named by
// APPTRACER_LOG (default warn, so a healthy run prints nothing).
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace apptracer {

void init_logging(const std::string& level);
spdlog::logger& logger();

template <typename... Args>
void log_error(spdlog::format_string_t<Args...> format, Args&&... args) {
  logger().error(format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_warn(spdlog::format_string_t<Args...> format, Args&&... args) {
  logger().warn(format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_info(spdlog::format_string_t<Args...> format, Args&&... args) {
  logger().info(format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_debug(spdlog::format_string_t<Args...> format, Args&&... args) {
  logger().debug(format, std::forward<Args>(args)...);
}

}  // namespace apptracer
