// Analyzer scaling (CPU): for each size, writes a synthetic trace of that
// many operations (10 kernel launches per copy, each with its runtime API
// call, the driver call folded in; bench/synthetic_trace.h),
// then runs `apptracer stats`, `timeline`, `query` (every kernel argument)
// and `dvdg` on it and reports each one's wall time and peak memory. bench/report.py turns the sizes into
// growth factors.
//
//   analyzer_scaling --apptracer PATH [--sizes N,N,...] [--dir DIR]
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_cost.h"
#include "synthetic_trace.h"

namespace {

using apptracer::bench::ChildCost;

struct Options {
  std::string apptracer;
  std::vector<long> sizes{10'000, 100'000, 1'000'000, 10'000'000};
  std::string dir = ".";
};

std::vector<long> parse_sizes(const std::string& text) {
  std::vector<long> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::stol(item));
  return sizes;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
    std::string value = argv[++i];
    if (arg == "--apptracer") options.apptracer = value;
    else if (arg == "--sizes") options.sizes = parse_sizes(value);
    else if (arg == "--dir") options.dir = value;
    else throw std::runtime_error("unknown option " + arg);
  }
  if (options.apptracer.empty()) throw std::runtime_error("--apptracer PATH is required");
  return options;
}

void report(long size, const char* what, const ChildCost& cost) {
  std::printf("  apptracer %-8s %7.2f s wall (%.2f s user, %.2f s system), peak RSS %6.0f MiB%s\n", what,
              cost.wall_s, cost.user_s, cost.system_s, cost.peak_mib,
              cost.exit_code == 0 ? "" : "  FAILED");
  std::printf("result analyzer.%s.%ld.s %.3f\n", what, size, cost.wall_s);
  std::printf("result analyzer.%s.%ld.cpu_s %.3f\n", what, size, cost.user_s + cost.system_s);
  std::printf("result analyzer.%s.%ld.peak_mib %.0f\n", what, size, cost.peak_mib);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options = parse(argc, argv);
    int failures = 0;
    for (long size : options.sizes) {
      std::string trace = options.dir + "/analyzer_scaling_" + std::to_string(size) + ".db";
      long copies = size / 11;
      auto start = std::chrono::steady_clock::now();
      apptracer::bench::write_synthetic_trace(trace, size - copies, copies, /*api_calls=*/true);
      double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      struct stat s {};
      stat(trace.c_str(), &s);
      std::printf("%ld operations (%ld kernels x 3 pointer args, %ld copies, 2 API calls each): trace %.0f MiB, written in %.1f s\n",
                  size, size - copies, copies, s.st_size / 1048576.0, write_s);
      std::printf("result analyzer.trace.%ld.mib %.0f\n", size, s.st_size / 1048576.0);
      std::fflush(stdout);
      // dvdg last: it stores its graph in the trace, which the others would then read too.
      // timeline and query stream what they write: their peak memory must not grow with size.
      std::vector<std::pair<const char*, std::vector<std::string>>> commands{
          {"stats", {"stats", trace}},
          {"timeline", {"timeline", trace, "-o", "/dev/null"}},
          {"query", {"query", trace, "SELECT * FROM kernel_args", "--format", "csv"}},
          {"dvdg", {"dvdg", trace}}};
      for (const auto& [name, arguments] : commands) {
        std::vector<std::string> argv{options.apptracer};
        argv.insert(argv.end(), arguments.begin(), arguments.end());
        ChildCost cost = apptracer::bench::run_child(argv);
        report(size, name, cost);
        failures += cost.exit_code != 0;
        std::fflush(stdout);
      }
      std::remove(trace.c_str());
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "analyzer_scaling: %s\n", error.what());
    return 1;
  }
}
