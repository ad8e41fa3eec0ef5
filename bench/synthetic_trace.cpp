#include "synthetic_trace.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>

#include "apptracer/enums.h"
#include "apptracer/schema.h"
#include "apptracer/sqlite.h"

namespace apptracer::bench {

namespace {

constexpr int64_t kDeviceBuffers = 2000;
constexpr int64_t kHostBuffers = 200;
constexpr int64_t kBufferBytes = 1 << 20;
constexpr int kKernelNames = 40;
constexpr int64_t kStreams[] = {13, 14};
// The API calls behind a launch or a copy, as the tracer records them: the
// runtime call and the driver call it made.
constexpr const char* kApiNames[] = {"cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpyAsync",
                                     "cuMemcpyAsync"};
constexpr int64_t kApiCbids[] = {211, 307, 41, 306};  // CUPTI callback ids of those

}  // namespace

// Written with prepared statements in one transaction.
void write_synthetic_trace(const std::string& path, int64_t kernels, int64_t copies, bool api_calls) {
  std::remove(path.c_str());
  Database db(path, Database::Mode::Create);
  db.exec("PRAGMA journal_mode = WAL");
  apptracer::with_transaction(db, [&] { db.exec(apptracer::trace_schema_sql()); });
  apptracer::with_transaction(db, [&] {
    db.exec("INSERT OR REPLACE INTO meta VALUES ('status', 'complete')");
    Statement strings = db.prepare("INSERT INTO strings(id, text) VALUES (?, ?)");
    for (int i = 1; i <= kKernelNames; ++i) {
      strings.bind(1, int64_t{i}).bind(2, "kernel_" + std::to_string(i) + "(float const*, float const*, float*)").run();
    }
    for (int i = 0; i < 4; ++i) strings.bind(1, int64_t{kKernelNames + 1 + i}).bind(2, kApiNames[i]).run();
    Statement allocation = db.prepare(
        "INSERT INTO allocations(id, kind, address, bytes, device, alloc_ns) VALUES (?,?,?,?,?,?)");
    for (int64_t i = 1; i <= kDeviceBuffers + kHostBuffers; ++i) {
      bool device = i <= kDeviceBuffers;
      allocation.bind(1, i)
          .bind(2, int64_t(device ? apptracer::AllocKind::Device : apptracer::AllocKind::PinnedHost))
          .bind(3, (device ? int64_t{0x7f0000000000} : int64_t{0x500000000}) + i * kBufferBytes)
          .bind(4, kBufferBytes);
      if (device) allocation.bind(5, int64_t{0});
      allocation.bind(6, i).run();
    }
    Statement kernel = db.prepare(
        "INSERT INTO kernels(id, name_id, demangled_id, launch_kind, device, stream, api_start_ns, "
        "gpu_start_ns, gpu_end_ns, call_correlation_id) VALUES (?,?,?,1,0,?,?,?,?,?)");
    Statement arg = db.prepare(
        "INSERT INTO kernel_args(kernel_id, param_index, offset, size, raw_value, alloc_id, "
        "alloc_offset, access, access_source) VALUES (?,?,?,8,?,?,0,?,?)");
    Statement copy = db.prepare(
        "INSERT INTO memcpys(kind, bytes, src_alloc_id, dst_alloc_id, src_offset, dst_offset, "
        "src_memory, dst_memory, src_device, dst_device, stream, is_async, api_start_ns, "
        "gpu_start_ns, gpu_end_ns, call_correlation_id) VALUES (?,?,?,?,0,0,?,?,?,?,?,1,?,?,?,?)");
    Statement api = db.prepare(
        "INSERT INTO api_calls(correlation_id, parent_correlation_id, domain, cbid, name_id, tid, "
        "start_ns, end_ns, return_code) VALUES (?,?,?,?,?,1,?,?,0)");
    int64_t last_correlation_id = 0;
    // Records the runtime call (api_index) and its driver call; returns the
    // runtime call's correlation id, or nothing without API calls.
    auto add_api_calls = [&](int api_index, int64_t start_ns) -> std::optional<int64_t> {
      if (!api_calls) return std::nullopt;
      int64_t runtime = ++last_correlation_id;
      int64_t driver = ++last_correlation_id;
      api.bind(1, runtime).bind_null(2).bind(3, int64_t(apptracer::ApiDomain::Runtime));
      api.bind(4, kApiCbids[api_index]).bind(5, int64_t{kKernelNames + 1 + api_index});
      api.bind(6, start_ns - 900).bind(7, start_ns + 900).run();
      api.bind(1, driver).bind(2, runtime).bind(3, int64_t(apptracer::ApiDomain::Driver));
      api.bind(4, kApiCbids[api_index + 1]).bind(5, int64_t{kKernelNames + 2 + api_index});
      api.bind(6, start_ns - 500).bind(7, start_ns + 500).run();
      return runtime;
    };
    Statement event = db.prepare(
        "INSERT INTO stream_events(kind, event_handle, stream, device, ns) VALUES (?,?,?,0,?)");
    Statement sync = db.prepare("INSERT INTO syncs(kind, device, start_ns, end_ns) VALUES (1,0,?,?)");

    std::mt19937_64 random(42);
    auto device_buffer = [&] { return int64_t(random() % kDeviceBuffers) + 1; };
    auto host_buffer = [&] { return kDeviceBuffers + int64_t(random() % kHostBuffers) + 1; };
    int64_t now = 1'000'000;
    int64_t copies_left = copies;
    int64_t copy_every = copies > 0 ? std::max<int64_t>(1, kernels / copies) : 0;
    for (int64_t k = 1; k <= kernels; ++k) {
      int64_t stream = kStreams[k % 2];
      now += 1000;
      kernel.bind(1, k).bind(2, int64_t(k % kKernelNames) + 1).bind(3, int64_t(k % kKernelNames) + 1);
      kernel.bind(4, stream).bind(5, now).bind(6, now + 3000).bind(7, now + 5000);
      kernel.bind(8, add_api_calls(0, now)).run();
      // kernel(const float* a, const float* b, float* out)
      for (int64_t param = 0; param < 3; ++param) {
        bool output = param == 2;
        int64_t buffer = device_buffer();
        arg.bind(1, k).bind(2, param).bind(3, param * 8).bind(4, int64_t{0x7f0000000000} + buffer * kBufferBytes);
        arg.bind(5, buffer)
            .bind(6, int64_t(output ? apptracer::AccessKind::ReadWrite : apptracer::AccessKind::Read))
            .bind(7, int64_t(output ? apptracer::AccessSource::Assumed : apptracer::AccessSource::ConstSignature))
            .run();
      }
      if (copy_every && copies_left > 0 && k % copy_every == 0) {
        --copies_left;
        now += 500;
        bool to_device = random() % 2 == 0;
        int64_t host = host_buffer();
        int64_t device = device_buffer();
        copy.bind(1, int64_t(to_device ? apptracer::CopyKind::HtoD : apptracer::CopyKind::DtoH));
        copy.bind(2, kBufferBytes).bind(3, to_device ? host : device).bind(4, to_device ? device : host);
        copy.bind(5, int64_t(to_device ? apptracer::MemoryKind::Pinned : apptracer::MemoryKind::Device));
        copy.bind(6, int64_t(to_device ? apptracer::MemoryKind::Device : apptracer::MemoryKind::Pinned));
        if (!to_device) copy.bind(7, int64_t{0});
        if (to_device) copy.bind(8, int64_t{0});
        copy.bind(9, stream).bind(10, now).bind(11, now + 3000).bind(12, now + 4000);
        copy.bind(13, add_api_calls(2, now)).run();
      }
      if (k % 1000 == 0) {
        // The other stream waits for this one.
        event.bind(1, int64_t(apptracer::StreamEventKind::Record)).bind(2, k).bind(3, stream).bind(4, now + 1).run();
        event.bind(1, int64_t(apptracer::StreamEventKind::Wait)).bind(2, k).bind(3, kStreams[(k + 1) % 2]).bind(4, now + 2).run();
      }
      if (k % 100000 == 0) sync.bind(1, now + 10).bind(2, now + 20).run();
    }
  });
}

}  // namespace apptracer::bench
