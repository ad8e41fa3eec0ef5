#include "base/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "apptracer/output_path.h"

namespace apptracer {

namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

bool preloaded() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload && std::string(preload).find("libapptracer") != std::string::npos;
}

// Once per process image, at the first reading of the options: preloaded,
// that is in the library's constructor, before main, while the process has
// one thread and no children (a forked child has it done already). The path
// is resolved here, in the directory the process starts in; the programs it
// execs get APPTRACER_FORCE=0 and the resolved path (inject/exit_exec.cpp).
bool take_force() {
  static const bool taken = [] {
    const char* force = env("APPTRACER_FORCE");
    if (!force || std::string(force) == "0" || !preloaded()) return false;
    std::string output = env("APPTRACER_OUTPUT") ? env("APPTRACER_OUTPUT") : Config().output;
    std::string path = expand_output_path(absolute_output_path(output), getpid(), host_name());
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((path + suffix).c_str());
    setenv("APPTRACER_FORCE", "0", 1);
    return true;
  }();
  return taken;
}

// A ResNet-18 training step runs about 1,500 ops and backward nodes: 1 in 16
// keeps torch's callbacks to about a hundred a step, and each launch of a
// steady step still has its op recorded in some step within 50 steps (96%).
constexpr uint32_t kDefaultOpSampleEvery = 16;
// Sampling begins after this many ops and nodes, each recorded: about two
// steady steps of a ViT or five of a ResNet-18 after its first. A run of few
// steps then still has every place of a steady step recorded once, for a
// one-time cost of a few milliseconds.
constexpr uint32_t kDefaultOpSampleAfter = 8192;

// A 32-bit count from the environment, if one is given: positive, or zero
// where zero means something.
void read_count(const char* name, uint32_t& out, bool zero_allowed = false) {
  if (const char* v = env(name)) {
    char* end = nullptr;
    unsigned long value = std::strtoul(v, &end, 10);
    if (end != v && *end == '\0' && (value > 0 || zero_allowed) && value <= UINT32_MAX) {
      out = static_cast<uint32_t>(value);
    }
  }
}

}  // namespace

const char* to_string(HostAllocations mode) {
  switch (mode) {
    case HostAllocations::All: return "all";
    case HostAllocations::Off: return "off";
    case HostAllocations::Touched: break;
  }
  return "touched";
}

const char* to_string(ExactMode mode) {
  switch (mode) {
    case ExactMode::WithCapture: return "1";
    case ExactMode::SanitizerOnly: return "sanitizer-only";
    case ExactMode::Off: break;
  }
  return "0";
}

Config Config::from_environment() {
  Config config;
  if (const char* v = env("APPTRACER_OUTPUT")) config.output = v;
  config.force = take_force();
  if (const char* v = env("APPTRACER_RUN_DIR")) config.run_dir = v;
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
  if (const char* v = env("APPTRACER_EXACT")) {
    for (ExactMode mode : {ExactMode::Off, ExactMode::WithCapture, ExactMode::SanitizerOnly}) {
      if (std::string(v) == to_string(mode)) config.exact = mode;
    }
  }
  if (const char* v = env("APPTRACER_UNIFIED_MEMORY")) config.unified_memory = v;
  if (const char* v = env("APPTRACER_KERNEL_ARGUMENTS")) config.kernel_arguments = std::string(v) != "off";
  if (const char* v = env("APPTRACER_FRAMEWORK_CONTEXT")) {
    for (const char* mode : {"off", "modules", "sampled", "on", "all"}) {
      if (std::string(v) == mode) config.framework_context = mode;
    }
  }
  config.every_framework_range = std::string(config.framework_context) == "all";
  if (std::string(config.framework_context) == "sampled") {
    config.op_sample_every = kDefaultOpSampleEvery;
    read_count("APPTRACER_OP_SAMPLE_EVERY", config.op_sample_every);
    config.op_sample_after = kDefaultOpSampleAfter;
    read_count("APPTRACER_OP_SAMPLE_AFTER", config.op_sample_after, true);
  }
  if (const char* v = env("APPTRACER_SELF_COST")) config.self_cost = std::string(v) == "1";
  read_count("APPTRACER_STALL_MS", config.stall_ms);
  read_count("APPTRACER_FORK_WAIT_MS", config.fork_wait_ms);
  read_count("APPTRACER_EXACT_SLOTS", config.exact_slots);
  read_count("APPTRACER_EXACT_PAGES", config.exact_pages);
  return config;
}

std::string Config::describe() const {
  return "output=" + output + " force=" + (force ? "1" : "0") + " log=" + log_level +
         " buffer_mb=" + std::to_string(buffer_bytes >> 20) +
         " flush_ms=" + std::to_string(flush_period_ms) +
         " stall_ms=" + std::to_string(stall_ms) + " fork_wait_ms=" + std::to_string(fork_wait_ms) +
         " unified_memory=" + (unified_memory.empty() ? "default" : unified_memory) +
         " host_allocations=" + to_string(host_allocations) +
         " host_min_bytes=" + std::to_string(host_min_bytes) + (self_cost ? " self_cost=1" : "") +
         " framework_context=" + std::string(framework_context) +
         (op_sample_every > 1 ? " op_sample_every=" + std::to_string(op_sample_every) +
                                    " op_sample_after=" + std::to_string(op_sample_after)
                              : "") +
         (kernel_arguments ? "" : " kernel_arguments=off") +
         (exact == ExactMode::Off
              ? std::string()
              : std::string(" exact=") + to_string(exact) +
                    " exact_slots=" + std::to_string(exact_slots) +
                    " exact_pages=" + std::to_string(exact_pages));
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

ClaimedOutput claim_output_path(const std::string& path, int pid) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path.size();
  std::string stem = path.substr(0, dot) + "-" + std::to_string(pid);
  std::string extension = path.substr(dot);
  std::string candidate = path;
  for (int n = 0;; ++n) {
    int fd = open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      struct stat info {};
      fstat(fd, &info);
      close(fd);
      return {candidate, static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino)};
    }
    if (errno != EEXIST || n == 1000) {
      throw std::runtime_error("cannot create " + candidate + ": " + std::strerror(errno));
    }
    candidate = n == 0 ? stem + extension : stem + "-" + std::to_string(n) + extension;
  }
}

void announce_trace(const std::string& run_dir, const std::string& path) {
  if (run_dir.empty()) return;
  // The path, then the pid: record tells a trace not begun yet from one
  // whose process ended before it began. The path as it was opened (made
  // absolute at start): looked up again now, after a chdir, it named
  // another file. Ended by a NUL, the one byte no path holds (a newline
  // may be part of one).
  std::string line = path + '\0' + std::to_string(getpid()) + "\n";
  std::string name = run_dir + "/trace-XXXXXX";
  int fd = mkstemp(name.data());
  if (fd < 0) return;  // record is gone, or its directory: nobody to tell
  ssize_t written = write(fd, line.data(), line.size());
  static_cast<void>(written);
  close(fd);
}

bool first_in_run_to_say(const std::string& run_dir, const std::string& line) {
  if (run_dir.empty()) return true;
  uint64_t hash = 14695981039346656037ull;  // FNV-1a: a name per line, no library
  for (unsigned char c : line) hash = (hash ^ c) * 1099511628211ull;
  char name[32];
  std::snprintf(name, sizeof name, "/said-%016llx", static_cast<unsigned long long>(hash));
  int fd = open((run_dir + name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errno != EEXIST;
  close(fd);
  return true;
}

}  // namespace apptracer
