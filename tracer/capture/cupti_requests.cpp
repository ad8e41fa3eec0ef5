#include "capture/cupti_requests.h"

#include "translate/traced_function.h"

namespace apptracer {

namespace {

// Graph nodes: made (by the graph API or stream capture), copied into an
// exec at instantiation, given new parameters in an exec (translate/graph_callbacks).
// A module unloading: its function handles may be reused (capture/subscriber).
const CUpti_CallbackId kResourceIds[] = {
    CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS,
    CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING};

const CUpti_ActivityKind kActivityKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_STREAM};

template <typename T, size_t N>
IdList<T> list(const T (&ids)[N]) {
  return {ids, N};
}

}  // namespace

IdList<CUpti_CallbackId> traced_resource_callbacks() { return list(kResourceIds); }
IdList<CUpti_ActivityKind> traced_activity_kinds() { return list(kActivityKinds); }
int enable_traced_callbacks(CUpti_SubscriberHandle subscriber,
                            void (*failed)(CUpti_CallbackDomain, CUpti_CallbackId, CUptiResult)) {
  int failures = 0;
  auto enable = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    CUptiResult result = cuptiEnableCallback(1, subscriber, domain, cbid);
    if (result == CUPTI_SUCCESS) return;
    ++failures;
    if (failed) failed(domain, cbid, result);
  };
  for (const TracedCallback& c : traced_callbacks()) enable(c.domain, c.cbid);
  for (CUpti_CallbackId cbid : traced_resource_callbacks()) enable(CUPTI_CB_DOMAIN_RESOURCE, cbid);
  return failures;
}

UmCounterSetup enable_traced_um_counters(const std::vector<UmCounterKind>& kinds) {
  UmCounterSetup setup;
  std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> supported;
  for (UmCounterKind counter : kinds) {
    auto kind = static_cast<CUpti_ActivityUnifiedMemoryCounterKind>(counter);
    CUpti_ActivityUnifiedMemoryCounterConfig config{};
    config.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_ALL_DEVICES;
    config.kind = kind;
    config.enable = 1;
    CUptiResult result = cuptiActivityConfigureUnifiedMemoryCounter(&config, 1);
    if (result == CUPTI_SUCCESS) {
      supported.push_back(config);
      setup.enabled.push_back(kind);
    } else {
      setup.unsupported.emplace_back(kind, result);
    }
  }
  if (supported.empty()) return setup;
  setup.enable_result = cuptiActivityConfigureUnifiedMemoryCounter(
      supported.data(), static_cast<uint32_t>(supported.size()));
  if (setup.enable_result == CUPTI_SUCCESS) {
    setup.enable_result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  }
  return setup;
}

CUptiResult request_zeroed_activity_buffers() {
  uint8_t zeroed = 1;
  size_t size = sizeof zeroed;
  return cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed);
}

}  // namespace apptracer
