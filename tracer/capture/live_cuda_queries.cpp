#include "capture/live_cuda_queries.h"

#include <cupti.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "base/driver.h"

namespace apptracer {

namespace {

// Bumped when a stream is destroyed: its handle may be reused for a new
// stream with another id, so every thread's cached ids are dropped.
std::atomic<uint64_t> stream_generation{0};

struct StreamKey {
  CUcontext context;
  CUstream stream;
  bool per_thread;
  bool operator==(const StreamKey& o) const {
    return context == o.context && stream == o.stream && per_thread == o.per_thread;
  }
};

// A few slots: programs use a handful of streams per thread.
struct StreamCache {
  static constexpr int kSlots = 8;
  StreamKey keys[kSlots]{};
  int64_t ids[kSlots]{};
  int used = 0;
  int next = 0;
  uint64_t generation = 0;
};

thread_local StreamCache stream_cache;

struct DeviceCache {
  CUcontext context = nullptr;
  int32_t device = -1;
};

thread_local DeviceCache device_cache;

// Bumped when a module is unloaded: XLA's autotuning loads and unloads
// modules by the thousand and the driver hands a new function an unloaded
// one's handle, so a layout read before it may be another function's (read
// by it, a launch's parameter array was read past its end).
std::atomic<uint64_t> function_generation{0};

}  // namespace

int32_t LiveCudaQueries::device_of(CUcontext context) {
  if (!context) return -1;
  if (device_cache.context == context) return device_cache.device;
  uint32_t device = 0;
  if (cuptiGetDeviceId(context, &device) != CUPTI_SUCCESS) return -1;
  device_cache = {context, static_cast<int32_t>(device)};
  return device_cache.device;
}

int64_t LiveCudaQueries::stream_id(CUcontext context, CUstream stream, bool per_thread) {
  if (!context) return -1;
  StreamCache& cache = stream_cache;
  uint64_t generation = stream_generation.load(std::memory_order_relaxed);
  if (cache.generation != generation) {
    cache.used = 0;
    cache.generation = generation;
  }
  StreamKey key{context, stream, per_thread};
  for (int i = 0; i < cache.used; ++i) {
    if (cache.keys[i] == key) return cache.ids[i];
  }
  uint32_t id = 0;
  if (cuptiGetStreamIdEx(context, stream, per_thread, &id) != CUPTI_SUCCESS) return -1;
  int slot = cache.used < StreamCache::kSlots ? cache.used++ : cache.next++ % StreamCache::kSlots;
  cache.keys[slot] = key;
  cache.ids[slot] = id;
  return id;
}

void LiveCudaQueries::forget_stream(CUstream) {
  stream_generation.fetch_add(1, std::memory_order_relaxed);
}

// Resolved once per handle under a lock (the driver's answers do not change),
// then one lookup in the calling thread's cache per launch.
const LaunchedFunction& LiveCudaQueries::function(const void* handle, const char* symbol_name) {
  thread_local std::unordered_map<const void*, const LaunchedFunction*> cache;
  thread_local uint64_t cache_generation = 0;
  uint64_t generation = function_generation.load(std::memory_order_acquire);
  if (cache_generation != generation) {
    cache.clear();
    cache_generation = generation;
  }
  auto hit = cache.find(handle);
  if (hit != cache.end()) return *hit->second;
  static std::mutex shared_mutex;
  static auto* shared = new std::unordered_map<const void*, std::unique_ptr<LaunchedFunction>>;
  // An unload's functions are kept, never freed: another thread may be
  // reading one in its launch's callback. A few hundred bytes each, made
  // only where modules come and go.
  static auto* retired = new std::vector<std::unique_ptr<LaunchedFunction>>;
  static uint64_t shared_generation = 0;
  const LaunchedFunction* info = nullptr;
  {
    std::lock_guard<std::mutex> lock(shared_mutex);
    if (shared_generation != generation) {
      for (auto& [old_handle, old] : *shared) retired->push_back(std::move(old));
      shared->clear();
      shared_generation = generation;
    }
    auto& slot = (*shared)[handle];
    if (!slot) {
      slot = std::make_unique<LaunchedFunction>();
      std::string name = symbol_name && *symbol_name ? symbol_name : driver_function_name(handle);
      slot->name_id = name.empty() ? 0 : strings_.intern(name);
      ParamLayout layout = driver_param_layout(handle);
      slot->param_offsets = std::move(layout.offsets);
      slot->param_sizes = std::move(layout.sizes);
    }
    info = slot.get();
  }
  cache[handle] = info;
  return *info;
}

void LiveCudaQueries::forget_functions() { function_generation.fetch_add(1, std::memory_order_release); }

std::pair<uint64_t, uint64_t> LiveCudaQueries::allocation_range(uint64_t address) {
  return driver_allocation_range(address);
}

uint32_t LiveCudaQueries::graph_id(CUgraph graph) {
  uint32_t id = 0;
  return graph && cuptiGetGraphId(graph, &id) == CUPTI_SUCCESS ? id : 0;
}

uint64_t LiveCudaQueries::graph_node_id(CUgraphNode node) {
  uint64_t id = 0;
  return node && cuptiGetGraphNodeId(node, &id) == CUPTI_SUCCESS ? id : 0;
}

namespace {

// Calls a driver getter that may be missing; true when it answered.
template <typename Getter, typename... Args>
bool ask(Getter getter, Args... args) {
  return getter && getter(args...) == CUDA_SUCCESS;
}

}  // namespace

// CUPTI's nodeType is filled only before a node exists (GRAPHNODE_CREATE_STARTING):
// the driver is asked instead (seen with CUPTI 13.0).
GraphNodeType LiveCudaQueries::graph_node_type(CUgraphNode node) {
  CUgraphNodeType type{};
  if (!ask(driver_graph_functions().node_type, node, &type)) return GraphNodeType::Unknown;
  return static_cast<GraphNodeType>(type);  // same numbers
}

bool LiveCudaQueries::kernel_node_params(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS& out) {
  return ask(driver_graph_functions().kernel_params, node, &out);
}

bool LiveCudaQueries::memcpy_node_params(CUgraphNode node, CUDA_MEMCPY3D& out) {
  return ask(driver_graph_functions().memcpy_params, node, &out);
}

bool LiveCudaQueries::memset_node_params(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS& out) {
  return ask(driver_graph_functions().memset_params, node, &out);
}

}  // namespace apptracer
