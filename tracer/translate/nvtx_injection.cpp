#include "translate/nvtx_injection.h"

#include <atomic>

#include "buffer/interned_text_cache.h"

namespace apptracer {

namespace {

using nvtx_abi::EventAttributes;

std::atomic<CaptureContext*> nvtx_context{nullptr};
std::atomic<uint64_t> next_range_id{1};

thread_local InternedTextCache message_cache;
thread_local int push_level = 0;  // what push and pop return (NVTX counts across domains)

uint32_t text_id(CaptureContext& ctx, const char* text) {
  return text ? message_cache.id(ctx.strings, text) : 0;
}

// Domains and registered strings are handles we return: their name's id.
void* handle_of(uint32_t id) { return reinterpret_cast<void*>(static_cast<uintptr_t>(id)); }
uint32_t id_of(const void* handle) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(handle));
}

uint32_t message_id(CaptureContext& ctx, const EventAttributes* attributes) {
  // Older, smaller attribute structs have no message field.
  if (!attributes || attributes->size < offsetof(EventAttributes, message) + sizeof(void*)) {
    return 0;
  }
  switch (attributes->message_type) {
    case nvtx_abi::kMessageAscii: return text_id(ctx, static_cast<const char*>(attributes->message));
    case nvtx_abi::kMessageRegistered: return id_of(attributes->message);
    default: return 0;  // wide characters: not recorded
  }
}

void emit(CaptureContext& ctx, NvtxEvent event, uint32_t name_id, uint32_t domain_id,
          uint64_t range_id = 0) {
  Record r{};
  r.type = RecordType::Nvtx;
  r.nvtx.ns = ctx.now_ns();
  r.nvtx.event = event;
  r.nvtx.name_id = name_id;
  r.nvtx.domain_id = domain_id;
  r.nvtx.range_id = range_id;
  ctx.buffers.append(r);
}

int push(uint32_t domain_id, const EventAttributes* attributes, const char* text) {
  if (CaptureContext* ctx = nvtx_context.load(std::memory_order_acquire)) {
    uint32_t name = attributes ? message_id(*ctx, attributes) : text_id(*ctx, text);
    emit(*ctx, NvtxEvent::Push, name, domain_id);
  }
  return push_level++;
}

int pop(uint32_t domain_id) {
  if (CaptureContext* ctx = nvtx_context.load(std::memory_order_acquire)) {
    emit(*ctx, NvtxEvent::Pop, 0, domain_id);
  }
  return push_level > 0 ? --push_level : -1;
}

uint64_t start(uint32_t domain_id, const EventAttributes* attributes, const char* text) {
  uint64_t id = next_range_id.fetch_add(1, std::memory_order_relaxed);
  if (CaptureContext* ctx = nvtx_context.load(std::memory_order_acquire)) {
    uint32_t name = attributes ? message_id(*ctx, attributes) : text_id(*ctx, text);
    emit(*ctx, NvtxEvent::Start, name, domain_id, id);
  }
  return id;
}

void end(uint32_t domain_id, uint64_t id) {
  if (CaptureContext* ctx = nvtx_context.load(std::memory_order_acquire)) {
    emit(*ctx, NvtxEvent::End, 0, domain_id, id);
  }
}

void mark(uint32_t domain_id, const EventAttributes* attributes, const char* text) {
  if (CaptureContext* ctx = nvtx_context.load(std::memory_order_acquire)) {
    uint32_t name = attributes ? message_id(*ctx, attributes) : text_id(*ctx, text);
    emit(*ctx, NvtxEvent::Mark, name, domain_id);
  }
}

uint32_t interned(const char* text) {
  CaptureContext* ctx = nvtx_context.load(std::memory_order_acquire);
  return ctx && text ? ctx->strings.intern(text) : 0;
}

// The slots, with NVTX's signatures.
void mark_ex(const EventAttributes* a) { mark(0, a, nullptr); }
void mark_a(const char* text) { mark(0, nullptr, text); }
uint64_t range_start_ex(const EventAttributes* a) { return start(0, a, nullptr); }
uint64_t range_start_a(const char* text) { return start(0, nullptr, text); }
void range_end(uint64_t id) { end(0, id); }
int range_push_ex(const EventAttributes* a) { return push(0, a, nullptr); }
int range_push_a(const char* text) { return push(0, nullptr, text); }
int range_pop() { return pop(0); }
void domain_mark_ex(void* domain, const EventAttributes* a) { mark(id_of(domain), a, nullptr); }
uint64_t domain_range_start_ex(void* domain, const EventAttributes* a) {
  return start(id_of(domain), a, nullptr);
}
void domain_range_end(void* domain, uint64_t id) { end(id_of(domain), id); }
int domain_range_push_ex(void* domain, const EventAttributes* a) {
  return push(id_of(domain), a, nullptr);
}
int domain_range_pop(void* domain) { return pop(id_of(domain)); }
void* domain_create_a(const char* name) { return handle_of(interned(name)); }
void domain_destroy(void*) {}
void* domain_register_string_a(void*, const char* text) { return handle_of(interned(text)); }

template <typename Function>
void fill(nvtx_abi::FunctionTable table, unsigned size, unsigned slot, Function* function) {
  if (slot < size && table[slot]) *table[slot] = reinterpret_cast<nvtx_abi::FunctionPointer>(function);
}

bool module_table(const nvtx_abi::ExportTableCallbacks& callbacks, int module,
                  nvtx_abi::FunctionTable& table, unsigned& size) {
  table = nullptr;
  size = 0;
  return callbacks.GetModuleFunctionTable(module, &table, &size) && table;
}

}  // namespace

void set_nvtx_context(CaptureContext* ctx) { nvtx_context.store(ctx, std::memory_order_release); }

int initialize_nvtx_injection(nvtx_abi::GetExportTable get_export_table) {
  if (!get_export_table) return 0;
  auto* callbacks = static_cast<const nvtx_abi::ExportTableCallbacks*>(
      get_export_table(nvtx_abi::kExportTableCallbacks));
  if (!callbacks || callbacks->struct_size < sizeof(nvtx_abi::ExportTableCallbacks) ||
      !callbacks->GetModuleFunctionTable) {
    return 0;
  }
  nvtx_abi::FunctionTable table;
  unsigned size;
  if (!module_table(*callbacks, nvtx_abi::kModuleCore, table, size)) return 0;
  using namespace nvtx_abi;
  fill(table, size, kMarkEx, mark_ex);
  fill(table, size, kMarkA, mark_a);
  fill(table, size, kRangeStartEx, range_start_ex);
  fill(table, size, kRangeStartA, range_start_a);
  fill(table, size, kRangeEnd, range_end);
  fill(table, size, kRangePushEx, range_push_ex);
  fill(table, size, kRangePushA, range_push_a);
  fill(table, size, kRangePop, range_pop);
  if (module_table(*callbacks, kModuleCore2, table, size)) {
    fill(table, size, kDomainMarkEx, domain_mark_ex);
    fill(table, size, kDomainRangeStartEx, domain_range_start_ex);
    fill(table, size, kDomainRangeEnd, domain_range_end);
    fill(table, size, kDomainRangePushEx, domain_range_push_ex);
    fill(table, size, kDomainRangePop, domain_range_pop);
    fill(table, size, kDomainRegisterStringA, domain_register_string_a);
    fill(table, size, kDomainCreateA, domain_create_a);
    fill(table, size, kDomainDestroy, domain_destroy);
  }
  return 1;
}

}  // namespace apptracer
