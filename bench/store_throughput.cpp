// Store throughput (CPU, synthetic): producer threads append the records the
// tracer would make for N operations into the tracer's own RecordBuffers,
// while its Writer turns them into a trace database, exactly as inside a
// traced program. Reports records per second sustained end to end (first
// append to the finished, checkpointed file), the producers' cost per record
// and time spent waiting for the writer, and database bytes per operation
// (the file minus that of a run with no operations).
//
//   store_throughput [--mix launch|copy|host-alloc|tensor|mixed] [--threads T] [--ops N]
//                    [--trace PATH]
//
// mixed: per 10 operations, 8 launches, 1 copy, 1 host allocation; tensor: framework
// allocators' blocks (not in mixed).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"
#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"
#include "buffer/string_table.h"
#include "frameworks/sub_allocation_events.h"
#include "store/writer.h"
#include "synthetic_records.h"

namespace {

using apptracer::bench::Operation;

struct Options {
  std::string mix = "mixed";
  int threads = 1;
  long ops = 1'000'000;
  std::string trace = "store_throughput.db";
};

Operation operation_of(const std::string& mix, long i) {
  if (mix == "launch") return Operation::Launch;
  if (mix == "copy") return Operation::Copy;
  if (mix == "host-alloc") return Operation::HostAlloc;
  if (mix == "tensor") return Operation::TensorBlock;
  long slot = i % 10;
  return slot == 8 ? Operation::Copy : slot == 9 ? Operation::HostAlloc : Operation::Launch;
}

long file_bytes(const std::string& path) {
  long total = 0;
  for (const char* suffix : {"", "-wal"}) {
    struct stat s {};
    if (stat((path + suffix).c_str(), &s) == 0) total += s.st_size;
  }
  return total;
}

struct Outcome {
  double seconds = 0;
  double producer_seconds = 0;  // summed over producer threads
  uint64_t records = 0;
  uint64_t producer_wait_ns = 0;
  uint64_t dropped = 0;
  long bytes = 0;
};

// One traced "process": buffers, registry and writer as the tracer sets them up.
Outcome run(const Options& options, long ops) {
  apptracer::Config config;
  config.output = options.trace;
  config.force = true;
  apptracer::RecordBuffers buffers(config.buffer_bytes);
  apptracer::AllocationRegistry registry;
  apptracer::Writer writer(buffers, registry, apptracer::strings(), config);
  writer.start();
  apptracer::frameworks::start_recording({&buffers, &apptracer::now_ns, nullptr});

  std::vector<double> producer_seconds(options.threads);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> producers;
  for (int t = 0; t < options.threads; ++t) {
    producers.emplace_back([&, t] {
      auto thread_start = std::chrono::steady_clock::now();
      if (t == 0) apptracer::bench::add_buffers(buffers, registry);
      apptracer::bench::RecordSource source(buffers, registry, t, options.threads);
      for (long i = t; i < ops; i += options.threads) source.emit(operation_of(options.mix, i));
      source.flush_activity();
      producer_seconds[t] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - thread_start).count();
    });
  }
  for (std::thread& producer : producers) producer.join();
  apptracer::frameworks::start_recording({});
  writer.finish("complete");
  Outcome outcome;
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (double s : producer_seconds) outcome.producer_seconds += s;
  outcome.records = buffers.drained_records();
  outcome.producer_wait_ns = buffers.producer_wait_ns();
  outcome.dropped = buffers.dropped_records();
  outcome.bytes = file_bytes(options.trace);
  return outcome;
}

// The size of a trace with no operations (schema, meta, threads, buffers),
// measured in a child so the tracer's process-wide string table starts empty
// in both runs.
long empty_trace_bytes(const Options& options) {
  Options empty = options;
  empty.trace = options.trace + ".empty";
  pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) _exit(run(empty, 0).bytes > 0 ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  long bytes = file_bytes(empty.trace);
  std::remove(empty.trace.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("the empty run failed");
  return bytes;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
    std::string value = argv[++i];
    if (arg == "--mix") options.mix = value;
    else if (arg == "--threads") options.threads = std::stoi(value);
    else if (arg == "--ops") options.ops = std::stol(value);
    else if (arg == "--trace") options.trace = value;
    else throw std::runtime_error("unknown option " + arg);
  }
  if (options.mix != "launch" && options.mix != "copy" && options.mix != "host-alloc" &&
      options.mix != "tensor" && options.mix != "mixed") {
    throw std::runtime_error("unknown mix " + options.mix);
  }
  if (options.threads < 1 || options.ops < 1) throw std::runtime_error("threads and ops must be positive");
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options = parse(argc, argv);
    apptracer::init_logging("warn");
    long empty_bytes = empty_trace_bytes(options);
    Outcome o = run(options, options.ops);
    if (!std::getenv("STORE_KEEP_TRACE")) std::remove(options.trace.c_str());
    std::string key = "store." + options.mix + ".t" + std::to_string(options.threads);
    double records_per_s = o.records / o.seconds;
    double bytes_per_op = static_cast<double>(o.bytes - empty_bytes) / options.ops;
    std::printf(
        "store %s, %d producer thread(s): %ld ops, %llu records in %.2f s end to end -> %.2fM records/s; "
        "producers %.0f ns per record, %.2f s waiting for the writer, %llu dropped; "
        "database %.1f MiB, %.1f bytes per op\n",
        options.mix.c_str(), options.threads, options.ops, static_cast<unsigned long long>(o.records),
        o.seconds, records_per_s / 1e6, o.producer_seconds * 1e9 / o.records, o.producer_wait_ns / 1e9,
        static_cast<unsigned long long>(o.dropped), o.bytes / 1048576.0, bytes_per_op);
    std::printf("result %s.records_per_s %.0f\n", key.c_str(), records_per_s);
    std::printf("result %s.producer_wait_s %.2f\n", key.c_str(), o.producer_wait_ns / 1e9);
    std::printf("result %s.producer_ns_per_record %.0f\n", key.c_str(),
                o.producer_seconds * 1e9 / o.records);
    std::printf("result %s.bytes_per_op %.1f\n", key.c_str(), bytes_per_op);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "store_throughput: %s\n", error.what());
    return 1;
  }
}
