// The sanitizer subscriber of --exact: patches every module as it loads,
// gives every kernel launch a slot, reads slots back when their work is done.
//
// Callbacks (all enabled ones; none per memory access):
//   RESOURCE     module loaded / unloading: patch, scan for TMA; context and
//                stream going away: read their launches back; in a
//                sanitizer-only run, allocations and frees
//   LAUNCH       begin: a slot for the launch (sanitizerSetLaunchCallbackData)
//   GRAPHS       a graph launch, and each kernel node it launches, likewise
//   SYNCHRONIZE  a stream or context synchronized: its launches are done
// A launch can be reported by both LAUNCH and GRAPHS: the first one counts.
#include <sanitizer.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "base/log.h"
#include "exact/code_scan.h"
#include "exact/exact.h"
#include "exact/exact_records.h"
#include "exact/patch_image.h"
#include "exact/patch_names.h"
#include "exact/resource_allocations.h"
#include "exact/sanitizer_api.h"
#include "exact/sanitizer_memory.h"

namespace apptracer::exact {

namespace {

// A graph launch's kernel nodes, numbered on the launching thread.
thread_local int32_t next_graph_position = 0;

class ExactCapture {
 public:
  ExactCapture(const SanitizerApi& api, const ExactOptions& options, const ExactHooks& hooks)
      : api_(api), options_(options), hooks_(hooks), memory_(api) {}

  bool subscribe(std::string& why_not);
  void on_callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data);
  void finish();

 private:
  void on_resource(Sanitizer_CallbackId cbid, const void* data);
  void on_module_loaded(const Sanitizer_ResourceModuleData& module);
  void on_memory(Sanitizer_CallbackId cbid, const Sanitizer_ResourceMemoryData& memory);
  void on_launch_begin(const Sanitizer_LaunchData& launch, bool graph_node);
  void on_launch_end(Sanitizer_LaunchHandle launch);
  // The context's pool (created on first use); null once the context is gone.
  SlotPool* pool_of(CUcontext context);
  void release_pool(CUcontext context);
  void emit(const LaunchFacts& launch, const DecodedLaunch& decoded);

  const SanitizerApi& api_;
  ExactOptions options_;
  ExactHooks hooks_;
  SanitizerMemory memory_;
  Sanitizer_SubscriberHandle subscriber_ = nullptr;
  std::atomic<uint64_t> next_launch_{1};

  // The sanitizer's patch calls must be serialized; the module table with them.
  std::mutex code_mutex_;
  std::unordered_set<CUcontext> contexts_with_patches_;
  std::unordered_map<CUmodule, ModuleCode> modules_;
  uint64_t modules_patched_ = 0, modules_failed_ = 0;

  std::mutex pools_mutex_;
  std::unordered_map<CUcontext, std::shared_ptr<SlotPool>> pools_;

  std::mutex launches_mutex_;
  std::unordered_set<Sanitizer_LaunchHandle> launches_begun_;
};

ExactCapture* capture = nullptr;

void SANITIZERAPI on_sanitizer_callback(void*, Sanitizer_CallbackDomain domain,
                                        Sanitizer_CallbackId cbid, const void* data) {
  capture->on_callback(domain, cbid, data);
}

bool ExactCapture::subscribe(std::string& why_not) {
  SanitizerResult result = api_.sanitizerSubscribe(&subscriber_, on_sanitizer_callback, nullptr);
  if (result != SANITIZER_SUCCESS) {
    why_not = result == SANITIZER_ERROR_MAX_LIMIT_REACHED
                  ? "the Compute Sanitizer is already in use (compute-sanitizer or another tool)"
                  : "cannot subscribe to the Compute Sanitizer: " + describe(api_, result);
    return false;
  }
  for (Sanitizer_CallbackDomain domain : {SANITIZER_CB_DOMAIN_RESOURCE, SANITIZER_CB_DOMAIN_LAUNCH,
                                          SANITIZER_CB_DOMAIN_GRAPHS,
                                          SANITIZER_CB_DOMAIN_SYNCHRONIZE}) {
    result = api_.sanitizerEnableDomain(1, subscriber_, domain);
    if (result != SANITIZER_SUCCESS) {
      why_not = "cannot enable the Compute Sanitizer's callbacks: " + describe(api_, result);
      api_.sanitizerUnsubscribe(subscriber_);
      return false;
    }
  }
  return true;
}

void ExactCapture::on_callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
                               const void* data) {
  switch (domain) {
    case SANITIZER_CB_DOMAIN_RESOURCE:
      on_resource(cbid, data);
      break;
    case SANITIZER_CB_DOMAIN_LAUNCH: {
      const auto& launch = *static_cast<const Sanitizer_LaunchData*>(data);
      if (cbid == SANITIZER_CBID_LAUNCH_BEGIN) on_launch_begin(launch, false);
      if (cbid == SANITIZER_CBID_LAUNCH_END) on_launch_end(launch.hLaunch);
      break;
    }
    case SANITIZER_CB_DOMAIN_GRAPHS:
      if (cbid == SANITIZER_CBID_GRAPHS_LAUNCH_BEGIN) {
        if (!static_cast<const Sanitizer_GraphLaunchData*>(data)->isGraphUpload) {
          next_graph_position = 0;
        }
      } else if (cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN ||
                 cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_END) {
        const auto& node = *static_cast<const Sanitizer_GraphNodeLaunchData*>(data);
        if (node.isGraphUpload || node.nodeType != CU_GRAPH_NODE_TYPE_KERNEL) break;
        if (cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN) {
          on_launch_begin(node.launchData, true);
        } else {
          on_launch_end(node.launchData.hLaunch);
        }
      }
      break;
    case SANITIZER_CB_DOMAIN_SYNCHRONIZE: {
      const auto& sync = *static_cast<const Sanitizer_SynchronizeData*>(data);
      SlotPool* pool = pool_of(sync.context);
      if (!pool) break;
      if (cbid == SANITIZER_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED) pool->retire_stream(sync.hStream);
      if (cbid == SANITIZER_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED) pool->retire_all();
      break;
    }
    default:
      break;
  }
}

void ExactCapture::on_resource(Sanitizer_CallbackId cbid, const void* data) {
  switch (cbid) {
    case SANITIZER_CBID_RESOURCE_MODULE_LOADED:
      on_module_loaded(*static_cast<const Sanitizer_ResourceModuleData*>(data));
      break;
    case SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING: {
      std::lock_guard<std::mutex> lock(code_mutex_);
      modules_.erase(static_cast<const Sanitizer_ResourceModuleData*>(data)->module);
      break;
    }
    case SANITIZER_CBID_RESOURCE_STREAM_DESTROY_STARTING: {
      const auto& stream = *static_cast<const Sanitizer_ResourceStreamData*>(data);
      if (SlotPool* pool = pool_of(stream.context)) pool->retire_stream(stream.hStream);
      break;
    }
    case SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
      release_pool(static_cast<const Sanitizer_ResourceContextData*>(data)->context);
      break;
    case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_ALLOC:
    case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_FREE:
    case SANITIZER_CBID_RESOURCE_HOST_MEMORY_ALLOC:
    case SANITIZER_CBID_RESOURCE_HOST_MEMORY_FREE:
    case SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC:
    case SANITIZER_CBID_RESOURCE_MEMORY_FREE_ASYNC:
      if (!options_.with_capture) {
        on_memory(cbid, *static_cast<const Sanitizer_ResourceMemoryData*>(data));
      }
      break;
    default:
      break;
  }
}

void ExactCapture::on_module_loaded(const Sanitizer_ResourceModuleData& module) {
  std::lock_guard<std::mutex> lock(code_mutex_);
  ModuleCode& code = modules_[module.module];
  code = ModuleCode{false, scan_cubin(module.pCubin, module.cubinSize)};
  auto failed = [&](const char* what, SanitizerResult result) {
    if (modules_failed_++ == 0) {
      log_warn("--exact: {} failed ({}); launches of such modules are marked incomplete", what,
               describe(api_, result));
    }
  };
  if (!contexts_with_patches_.count(module.context)) {
    SanitizerResult result = api_.sanitizerAddPatches(kPatchImage, module.context);
    if (result != SANITIZER_SUCCESS) return failed("loading the exact patch", result);
    contexts_with_patches_.insert(module.context);
  }
#define APPTRACER_EXACT_PATCH(instruction, callback)                                     \
  if (SanitizerResult result = api_.sanitizerPatchInstructions(                          \
          SANITIZER_INSTRUCTION_##instruction, module.module, #callback);                \
      result != SANITIZER_SUCCESS) {                                                     \
    return failed("patching " #instruction " instructions", result);                      \
  }
  APPTRACER_EXACT_PATCHES(APPTRACER_EXACT_PATCH)
#undef APPTRACER_EXACT_PATCH
  if (SanitizerResult result = api_.sanitizerPatchModule(module.module);
      result != SANITIZER_SUCCESS) {
    return failed("patching a module", result);
  }
  code.instrumented = true;
  ++modules_patched_;
}

void ExactCapture::on_memory(Sanitizer_CallbackId cbid, const Sanitizer_ResourceMemoryData& m) {
  uint64_t ns = hooks_.now_ns();
  if (cbid == SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_FREE ||
      cbid == SANITIZER_CBID_RESOURCE_HOST_MEMORY_FREE ||
      cbid == SANITIZER_CBID_RESOURCE_MEMORY_FREE_ASYNC) {
    // A peer mapping's end leaves its GPU's allocation live.
    if (!is_peer_mapping(m.flags)) record_free(hooks_.buffers, hooks_.allocations, m.address, ns);
    return;
  }
  MemoryOrigin origin = cbid == SANITIZER_CBID_RESOURCE_HOST_MEMORY_ALLOC ? MemoryOrigin::PinnedHost
                        : cbid == SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC
                            ? MemoryOrigin::StreamOrdered
                            : MemoryOrigin::Device;
  if (std::optional<AllocKind> kind = allocation_kind(m.flags, origin)) {
    record_allocation(hooks_.buffers, hooks_.allocations, m.address, m.size, *kind,
                      static_cast<int32_t>(m.device), ns);
  }
}

SlotPool* ExactCapture::pool_of(CUcontext context) {
  std::lock_guard<std::mutex> lock(pools_mutex_);
  auto found = pools_.find(context);
  return found == pools_.end() ? nullptr : found->second.get();
}

void ExactCapture::release_pool(CUcontext context) {
  std::shared_ptr<SlotPool> pool;
  {
    std::lock_guard<std::mutex> lock(pools_mutex_);
    auto found = pools_.find(context);
    if (found == pools_.end()) return;
    pool = found->second;
    pools_.erase(found);  // a later context may get the same handle
  }
  pool->release();
  std::lock_guard<std::mutex> lock(code_mutex_);
  contexts_with_patches_.erase(context);
}

void ExactCapture::emit(const LaunchFacts& launch, const DecodedLaunch& decoded) {
  emit_exact_launch(hooks_.buffers, launch, decoded);
}

void ExactCapture::on_launch_begin(const Sanitizer_LaunchData& launch, bool graph_node) {
  {
    std::lock_guard<std::mutex> lock(launches_mutex_);
    if (!launches_begun_.insert(launch.hLaunch).second) return;
  }
  LaunchFacts facts;
  facts.launch_index = next_launch_++;
  facts.api_start_ns = hooks_.now_ns();
  facts.correlation_id = hooks_.current_correlation_id ? hooks_.current_correlation_id() : 0;
  facts.name_id = launch.functionName ? hooks_.strings.intern(launch.functionName) : 0;
  facts.device = static_cast<int32_t>(launch.device);
  if (graph_node) facts.graph_position = next_graph_position++;
  {
    std::lock_guard<std::mutex> lock(code_mutex_);
    auto module = modules_.find(launch.module);
    facts.incomplete = gap_of(module == modules_.end() ? nullptr : &module->second,
                              launch.functionName ? launch.functionName : "");
  }
  void* slot = nullptr;
  if (facts.incomplete == ExactGap::NotInstrumented) {
    emit(facts, DecodedLaunch{});
  } else {
    std::shared_ptr<SlotPool> pool;
    {
      std::lock_guard<std::mutex> lock(pools_mutex_);
      std::shared_ptr<SlotPool>& entry = pools_[launch.context];
      if (!entry) {
        entry = std::make_shared<SlotPool>(
            memory_, launch.context, options_.pool,
            [this](const LaunchFacts& retired, const DecodedLaunch& decoded) {
              emit(retired, decoded);
            });
      }
      pool = entry;
    }
    slot = pool->begin_launch(facts, launch.hStream);
  }
  // Null userdata: the patch returns at once (the launch is not recorded).
  api_.sanitizerSetLaunchCallbackData(launch.hLaunch, launch.function, launch.hStream, slot);
}

void ExactCapture::on_launch_end(Sanitizer_LaunchHandle launch) {
  std::lock_guard<std::mutex> lock(launches_mutex_);
  launches_begun_.erase(launch);
}

void ExactCapture::finish() {
  std::vector<std::shared_ptr<SlotPool>> pools;
  {
    std::lock_guard<std::mutex> lock(pools_mutex_);
    for (auto& [context, pool] : pools_) pools.push_back(pool);
  }
  for (auto& pool : pools) pool->retire_all();
  std::lock_guard<std::mutex> lock(code_mutex_);
  hooks_.set_meta("exact.launches", std::to_string(next_launch_ - 1));
  hooks_.set_meta("exact.modules_patched", std::to_string(modules_patched_));
  hooks_.set_meta("exact.modules_not_patched", std::to_string(modules_failed_));
}

}  // namespace

bool start_exact(const ExactOptions& options, const ExactHooks& hooks, std::string& why_not) {
  const SanitizerApi* api = load_sanitizer(why_not);
  if (!api) return false;
  capture = new ExactCapture(*api, options, hooks);
  if (!capture->subscribe(why_not)) {
    delete capture;
    capture = nullptr;
    return false;
  }
  hooks.set_meta("exact.sanitizer_library", api->path);
  hooks.set_meta("exact.granularity_bytes", std::to_string(kGranuleBytes));
  hooks.set_meta("exact.slots", std::to_string(options.pool.slots));
  hooks.set_meta("exact.pages_per_launch", std::to_string(options.pool.capacity));
  return true;
}

void finish_exact() {
  if (capture) capture->finish();
}

}  // namespace apptracer::exact
