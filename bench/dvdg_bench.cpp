// Benchmark of `apptracer dvdg`: writes a synthetic trace (by default 1M
// kernel launches with 3 pointer arguments each and 100k copies, on two
// streams ordered by events and device synchronizations), then runs
// `apptracer dvdg` on it and prints its wall time and peak memory. CPU only.
// With --sub-allocations the device buffers are tensors carved out of 20
// segments, each kernel writing a new one (as PyTorch traces are). With
// --foreach K, every 569 launches (a step of the 2,000-step GPT-2-style
// training trace) end with a foreach optimizer kernel over K parameter
// tensors through an array of pointers (synthetic_trace.h); the edges per
// operation are what it is for.
//
//   dvdg_bench [--kernels N] [--copies N] [--sub-allocations] [--foreach K] [--trace PATH]
//              [--apptracer PATH]
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "apptracer/sqlite.h"
#include "synthetic_trace.h"

namespace {

using apptracer::Database;
using apptracer::Statement;

struct Options {
  int64_t kernels = 1'000'000;
  int64_t copies = 100'000;
  bool sub_allocations = false;
  int64_t foreach_tensors = 0;
  std::string trace = "dvdg_bench.db";
  std::string apptracer = APPTRACER_BIN;
};

std::string summary_path(const Options& options) { return options.trace + ".summary"; }

double peak_mib(const rusage& usage) { return static_cast<double>(usage.ru_maxrss) / 1024.0; }

int run_dvdg(const Options& options) {
  auto start = std::chrono::steady_clock::now();
  pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    // Its summary's first line has the counts; the uninitialized reads it
    // lists after it (the synthetic kernels read buffers nothing wrote) are
    // not shown.
    if (!freopen(summary_path(options).c_str(), "w", stdout)) _exit(127);
    execl(options.apptracer.c_str(), options.apptracer.c_str(), "dvdg", options.trace.c_str(),
          static_cast<char*>(nullptr));
    std::perror("dvdg_bench: cannot run apptracer");
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
               usage.ru_stime.tv_usec / 1e6;
  std::printf(
      "apptracer dvdg: %.2f s wall, %.2f s user, %.2f s system, peak RSS %.0f MiB, exit %d\n",
      seconds, usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6,
      usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6, peak_mib(usage),
      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  // For bench/report.py (bench/run.sh's analyzer section).
  std::string key = std::string("analyzer.") +
                    (options.foreach_tensors > 0 ? "dvdg_foreach" + std::to_string(options.foreach_tensors) + "."
                     : options.sub_allocations  ? "dvdg_sub."
                                                : "dvdg_plain.") +
                    std::to_string(options.kernels);
  std::printf("result %s.s %.3f\nresult %s.cpu_s %.3f\nresult %s.peak_mib %.0f\n", key.c_str(),
              seconds, key.c_str(), cpu, key.c_str(), peak_mib(usage));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  // "dvdg: N operations, V values, E edges[, ...]".
  std::string summary;
  if (FILE* file = std::fopen(summary_path(options).c_str(), "r")) {
    char line[512] = {};
    if (std::fgets(line, sizeof line, file)) summary = line;
    std::fclose(file);
  }
  std::remove(summary_path(options).c_str());
  long long operations = 0, values = 0, edges = 0;
  if (std::sscanf(summary.c_str(), "dvdg: %lld operations, %lld values, %lld edges", &operations,
                  &values, &edges) != 3 || operations <= 0) {
    std::fprintf(stderr, "dvdg_bench: no summary from apptracer dvdg\n");
    return 1;
  }
  std::printf("%s", summary.c_str());
  std::printf("edges per operation: %.2f\nresult %s.edges_per_op %.2f\n",
              static_cast<double>(edges) / operations, key.c_str(),
              static_cast<double>(edges) / operations);
  Database db(options.trace, Database::Mode::ReadOnly);
  Statement counts = db.prepare(
      "SELECT (SELECT count(*) FROM dvdg_ops), (SELECT count(*) FROM dvdg_values), "
      "(SELECT count(*) FROM dvdg_op_values), (SELECT count(*) FROM dvdg_listed_edges)");
  counts.step();
  std::printf("stored graph: %lld operations, %lld values, %lld op-value rows, %lld listed edges\n",
              static_cast<long long>(counts.int64(0)), static_cast<long long>(counts.int64(1)),
              static_cast<long long>(counts.int64(2)), static_cast<long long>(counts.int64(3)));
  std::printf("target: under 5 s and under 1024 MiB -> %s\n",
              seconds < 5.0 && peak_mib(usage) < 1024 ? "met" : "NOT met");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--kernels")
        options.kernels = std::stoll(value());
      else if (arg == "--copies")
        options.copies = std::stoll(value());
      else if (arg == "--sub-allocations")
        options.sub_allocations = true;
      else if (arg == "--foreach")
        options.foreach_tensors = std::stoll(value());
      else if (arg == "--trace")
        options.trace = value();
      else if (arg == "--apptracer")
        options.apptracer = value();
      else
        throw std::runtime_error("unknown option " + arg);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "dvdg_bench: %s\n", error.what());
      return 2;
    }
  }
  try {
    auto start = std::chrono::steady_clock::now();
    apptracer::bench::write_synthetic_trace(options.trace, options.kernels, options.copies,
                                            /*api_calls=*/false, options.sub_allocations, 0,
                                            options.foreach_tensors);
    std::string foreach =
        options.foreach_tensors > 0
            ? ", a foreach kernel over " + std::to_string(options.foreach_tensors) + " tensors every " +
                  std::to_string(apptracer::bench::kStepKernels) + " launches"
            : "";
    std::printf(
        "synthetic trace: %lld kernels x 3 pointer args, %lld copies, 2 streams%s%s -> %s (%.1f s "
        "to write)\n",
        static_cast<long long>(options.kernels), static_cast<long long>(options.copies),
        options.sub_allocations ? ", every output a new tensor in 20 segments" : "", foreach.c_str(),
        options.trace.c_str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    std::fflush(stdout);
    return run_dvdg(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dvdg_bench: %s\n", error.what());
    return 1;
  }
}
