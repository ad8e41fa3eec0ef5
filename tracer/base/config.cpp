#include "base/config.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace apptracer {

namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

const char* to_string(HostAllocations mode) {
  switch (mode) {
    case HostAllocations::All: return "all";
    case HostAllocations::Off: return "off";
    case HostAllocations::Touched: break;
  }
  return "touched";
}

Config Config::from_environment() {
  Config config;
  if (const char* v = env("APPTRACER_OUTPUT")) config.output = v;
  if (const char* v = env("APPTRACER_FORCE")) config.force = std::string(v) != "0";
  if (const char* v = env("APPTRACER_LOG")) config.log_level = v;
  if (const char* v = env("APPTRACER_BUFFER_MB")) {
    long mb = std::strtol(v, nullptr, 10);
    if (mb > 0) config.buffer_bytes = static_cast<size_t>(mb) << 20;
  }
  if (const char* v = env("APPTRACER_FLUSH_MS")) {
    long ms = std::strtol(v, nullptr, 10);
    if (ms > 0) config.flush_period_ms = static_cast<int>(ms);
  }
  if (const char* v = env("APPTRACER_HOST_ALLOCATIONS")) {
    for (HostAllocations mode : {HostAllocations::Touched, HostAllocations::All, HostAllocations::Off}) {
      if (std::string(v) == to_string(mode)) config.host_allocations = mode;
    }
  }
  if (const char* v = env("APPTRACER_HOST_MIN_BYTES")) {
    char* end = nullptr;
    unsigned long long bytes = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0') config.host_min_bytes = bytes;
  }
  return config;
}

std::string Config::describe() const {
  return "output=" + output + " force=" + (force ? "1" : "0") + " log=" + log_level +
         " buffer_mb=" + std::to_string(buffer_bytes >> 20) +
         " flush_ms=" + std::to_string(flush_period_ms) +
         " host_allocations=" + to_string(host_allocations) +
         " host_min_bytes=" + std::to_string(host_min_bytes);
}

std::string expand_output_path(const std::string& pattern, int pid, const std::string& host) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    char code = pattern[++i];
    if (code == 'p') {
      out += std::to_string(pid);
    } else if (code == 'h') {
      out += host;
    } else if (code == '%') {
      out += '%';
    } else {
      out += '%';
      out += code;
    }
  }
  return out;
}

std::string unique_output_path(const std::string& path, int pid, bool force) {
  if (force || !exists(path)) return path;
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path.size();
  std::string stem = path.substr(0, dot) + "-" + std::to_string(pid);
  std::string extension = path.substr(dot);
  std::string candidate = stem + extension;
  for (int n = 1; exists(candidate); ++n) candidate = stem + "-" + std::to_string(n) + extension;
  return candidate;
}

}  // namespace apptracer
