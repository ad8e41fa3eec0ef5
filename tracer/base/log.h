// One-line messages on stderr, prefixed "apptracer:", at the level named by
// APPTRACER_LOG (default warn, so a healthy run prints nothing). What they
// hold (paths, names the program gave) is shown escaped for a terminal: a
// path cannot move the cursor or recolour the user's terminal.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <utility>

#include "apptracer/text_escape.h"

namespace apptracer {

void init_logging(const std::string& level);
spdlog::logger& logger();

template <typename... Args>
void log_at(spdlog::level::level_enum level, spdlog::format_string_t<Args...> format, Args&&... args) {
  if (!logger().should_log(level)) return;
  logger().log(level, "{}", terminal_text(fmt::format(format, std::forward<Args>(args)...)));
}
template <typename... Args>
void log_error(spdlog::format_string_t<Args...> format, Args&&... args) {
  log_at(spdlog::level::err, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_warn(spdlog::format_string_t<Args...> format, Args&&... args) {
  log_at(spdlog::level::warn, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_info(spdlog::format_string_t<Args...> format, Args&&... args) {
  log_at(spdlog::level::info, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_debug(spdlog::format_string_t<Args...> format, Args&&... args) {
  log_at(spdlog::level::debug, format, std::forward<Args>(args)...);
}

}  // namespace apptracer
