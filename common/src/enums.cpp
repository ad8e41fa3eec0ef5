#include "apptracer/enums.h"

namespace apptracer {

#define APPTRACER_ENUM_CASE(name, value, text) \
  case decltype(v)::name:                      \
    return text;

#define APPTRACER_DEFINE_TO_STRING(Type, LIST)  \
  std::string_view to_string(Type v) {          \
    switch (v) { LIST(APPTRACER_ENUM_CASE) }    \
    return "?";                                 \
  }

APPTRACER_DEFINE_TO_STRING(ApiDomain, APPTRACER_API_DOMAINS)
APPTRACER_DEFINE_TO_STRING(AllocKind, APPTRACER_ALLOC_KINDS)
APPTRACER_DEFINE_TO_STRING(MemoryKind, APPTRACER_MEMORY_KINDS)
APPTRACER_DEFINE_TO_STRING(CopyKind, APPTRACER_COPY_KINDS)
APPTRACER_DEFINE_TO_STRING(SyncKind, APPTRACER_SYNC_KINDS)
APPTRACER_DEFINE_TO_STRING(StreamEventKind, APPTRACER_STREAM_EVENT_KINDS)
APPTRACER_DEFINE_TO_STRING(LaunchKind, APPTRACER_LAUNCH_KINDS)
APPTRACER_DEFINE_TO_STRING(AccessKind, APPTRACER_ACCESS_KINDS)
APPTRACER_DEFINE_TO_STRING(AccessSource, APPTRACER_ACCESS_SOURCES)
APPTRACER_DEFINE_TO_STRING(UmCounterKind, APPTRACER_UM_COUNTER_KINDS)
APPTRACER_DEFINE_TO_STRING(UmMigrationCause, APPTRACER_UM_MIGRATION_CAUSES)
APPTRACER_DEFINE_TO_STRING(MemAdvice, APPTRACER_MEM_ADVICES)
APPTRACER_DEFINE_TO_STRING(MemLocationType, APPTRACER_MEM_LOCATION_TYPES)

#undef APPTRACER_DEFINE_TO_STRING
#undef APPTRACER_ENUM_CASE

MemoryKind memory_kind_of(AllocKind kind) {
  switch (kind) {
    case AllocKind::Device:
    case AllocKind::Pool:
    case AllocKind::VmmReserve:
    case AllocKind::VmmPhysical:
    case AllocKind::VmmMapping:
      return MemoryKind::Device;
    case AllocKind::PinnedHost:
    case AllocKind::WriteCombinedHost:
    case AllocKind::MappedHost:
    case AllocKind::RegisteredHost:
      return MemoryKind::Pinned;
    case AllocKind::Managed:
      return MemoryKind::Managed;
    case AllocKind::PageableHost:
      return MemoryKind::Pageable;
    case AllocKind::Array:
      return MemoryKind::Array;
  }
  return MemoryKind::Unknown;
}

bool is_device_memory(MemoryKind kind) {
  return kind == MemoryKind::Device || kind == MemoryKind::Array ||
         kind == MemoryKind::DeviceStatic;
}

}  // namespace apptracer
