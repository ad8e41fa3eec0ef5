#include "synthetic_trace.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>

#include "apptracer/enums.h"
#include "apptracer/schema.h"
#include "apptracer/row_inserter.h"

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

// Written through the generated row inserters in one transaction.
void write_synthetic_trace(const std::string& path, int64_t kernels, int64_t copies, bool api_calls) {
  std::remove(path.c_str());
  Database db(path, Database::Mode::Create);
  db.exec("PRAGMA journal_mode = WAL");
  apptracer::with_transaction(db, [&] { db.exec(apptracer::trace_schema_sql()); });
  apptracer::with_transaction(db, [&] {
    db.exec("INSERT OR REPLACE INTO meta VALUES ('status', 'complete')");
    RowInserter<StringRow> strings(db);
    for (int i = 1; i <= kKernelNames; ++i) {
      StringRow row;
      row.id = i;
      row.text = "kernel_" + std::to_string(i) + "(float const*, float const*, float*)";
      strings.insert(row);
    }
    for (int i = 0; i < 4; ++i) {
      StringRow row;
      row.id = kKernelNames + 1 + i;
      row.text = kApiNames[i];
      strings.insert(row);
    }
    RowInserter<AllocationRow> allocation(db);
    for (int64_t i = 1; i <= kDeviceBuffers + kHostBuffers; ++i) {
      bool device = i <= kDeviceBuffers;
      AllocationRow row;
      row.id = i;
      row.kind = device ? AllocKind::Device : AllocKind::PinnedHost;
      row.address = (device ? int64_t{0x7f0000000000} : int64_t{0x500000000}) + i * kBufferBytes;
      row.bytes = kBufferBytes;
      if (device) row.device = 0;
      row.alloc_ns = i;
      allocation.insert(row);
    }
    RowInserter<KernelRow> kernel(db);
    RowInserter<KernelArgSetRow> arg_set(db);
    RowInserter<KernelArgWordRow> arg(db);
    RowInserter<MemcpyRow> copy(db);
    RowInserter<ApiCallRow> api(db);
    int64_t last_correlation_id = 0;
    // Records the runtime call (api_index) and its driver call; returns the
    // runtime call's correlation id, or nothing without API calls.
    auto add_api_calls = [&](int api_index, int64_t start_ns) -> std::optional<int64_t> {
      if (!api_calls) return std::nullopt;
      int64_t runtime = ++last_correlation_id;
      int64_t driver = ++last_correlation_id;
      ApiCallRow row;
      row.correlation_id = runtime;
      row.domain = ApiDomain::Runtime;
      row.cbid = kApiCbids[api_index];
      row.name_id = kKernelNames + 1 + api_index;
      row.tid = 1;
      row.start_ns = start_ns - 900;
      row.end_ns = start_ns + 900;
      api.insert(row);
      row.correlation_id = driver;
      row.parent_correlation_id = runtime;
      row.domain = ApiDomain::Driver;
      row.cbid = kApiCbids[api_index + 1];
      row.name_id = kKernelNames + 2 + api_index;
      row.start_ns = start_ns - 500;
      row.end_ns = start_ns + 500;
      api.insert(row);
      return runtime;
    };
    RowInserter<StreamEventRow> event(db);
    RowInserter<SyncRow> sync(db);

    std::mt19937_64 random(42);
    auto device_buffer = [&] { return int64_t(random() % kDeviceBuffers) + 1; };
    auto host_buffer = [&] { return kDeviceBuffers + int64_t(random() % kHostBuffers) + 1; };
    int64_t now = 1'000'000;
    int64_t copies_left = copies;
    int64_t copy_every = copies > 0 ? std::max<int64_t>(1, kernels / copies) : 0;
    for (int64_t k = 1; k <= kernels; ++k) {
      int64_t stream = kStreams[k % 2];
      now += 1000;
      // kernel(const float* a, const float* b, float* out), on random buffers:
      // every launch has an argument set of its own.
      KernelArgSetRow set;
      set.id = k;
      set.words = 3;
      arg_set.insert(set);
      for (int64_t param = 0; param < 3; ++param) {
        bool output = param == 2;
        int64_t buffer = device_buffer();
        KernelArgWordRow word;
        word.arg_set_id = k;
        word.param_index = param;
        word.offset = param * 8;
        word.size = 8;
        word.raw_value = int64_t{0x7f0000000000} + buffer * kBufferBytes;
        word.alloc_id = buffer;
        word.alloc_offset = 0;
        word.access = output ? AccessKind::ReadWrite : AccessKind::Read;
        word.access_source = output ? AccessSource::Assumed : AccessSource::ConstSignature;
        arg.insert(word);
      }
      KernelRow launch;
      launch.id = k;
      launch.name_id = k % kKernelNames + 1;
      launch.demangled_id = k % kKernelNames + 1;
      launch.launch_kind = LaunchKind::Driver;
      launch.device = 0;
      launch.stream = stream;
      launch.arg_set_id = k;
      launch.api_start_ns = now;
      launch.gpu_start_ns = now + 3000;
      launch.gpu_end_ns = now + 5000;
      launch.call_correlation_id = add_api_calls(0, now);
      kernel.insert(launch);
      if (copy_every && copies_left > 0 && k % copy_every == 0) {
        --copies_left;
        now += 500;
        bool to_device = random() % 2 == 0;
        int64_t host = host_buffer();
        int64_t device = device_buffer();
        MemcpyRow row;
        row.kind = to_device ? CopyKind::HtoD : CopyKind::DtoH;
        row.bytes = kBufferBytes;
        row.src_alloc_id = to_device ? host : device;
        row.dst_alloc_id = to_device ? device : host;
        row.src_offset = row.dst_offset = 0;
        row.src_memory = to_device ? MemoryKind::Pinned : MemoryKind::Device;
        row.dst_memory = to_device ? MemoryKind::Device : MemoryKind::Pinned;
        if (!to_device) row.src_device = 0;
        if (to_device) row.dst_device = 0;
        row.stream = stream;
        row.is_async = 1;
        row.api_start_ns = now;
        row.gpu_start_ns = now + 3000;
        row.gpu_end_ns = now + 4000;
        row.call_correlation_id = add_api_calls(2, now);
        copy.insert(row);
      }
      if (k % 1000 == 0) {
        // The other stream waits for this one.
        StreamEventRow row;
        row.kind = StreamEventKind::Record;
        row.event_handle = k;
        row.stream = stream;
        row.device = 0;
        row.ns = now + 1;
        event.insert(row);
        row.kind = StreamEventKind::Wait;
        row.stream = kStreams[(k + 1) % 2];
        row.ns = now + 2;
        event.insert(row);
      }
      if (k % 100000 == 0) {
        SyncRow row;
        row.kind = SyncKind::Device;
        row.device = 0;
        row.start_ns = now + 10;
        row.end_ns = now + 20;
        sync.insert(row);
      }
    }
  });
}

}  // namespace apptracer::bench
