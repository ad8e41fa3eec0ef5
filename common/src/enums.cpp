#include "apptracer/enums.h"

namespace apptracer {

#define APPTRACER_ENUM_CASE(name, value, text) \
  case decltype(v)::name:                      \
    return text;
#define APPTRACER_DEFINE_TO_STRING(Type, sql_name, LIST) \
  std::string_view to_string(Type v) {                   \
    switch (v) { LIST(APPTRACER_ENUM_CASE) }             \
    return "?";                                          \
  }
APPTRACER_ENUMS(APPTRACER_DEFINE_TO_STRING)
#undef APPTRACER_DEFINE_TO_STRING
#undef APPTRACER_ENUM_CASE

const std::vector<EnumValue>& all_enum_values() {
#define APPTRACER_ENUM_ROW(name, value, text) {enum_name, value, text},
#define APPTRACER_ENUM_ROWS(Type, sql_name, LIST)         \
  {                                                       \
    const char* enum_name = #sql_name;                    \
    rows->insert(rows->end(), {LIST(APPTRACER_ENUM_ROW)}); \
  }
  // Never destroyed: traces are finished from exit handlers.
  static const auto* values = [] {
    auto* rows = new std::vector<EnumValue>;
    APPTRACER_ENUMS(APPTRACER_ENUM_ROWS)
    return rows;
  }();
#undef APPTRACER_ENUM_ROWS
#undef APPTRACER_ENUM_ROW
  return *values;
}

MemoryKind memory_kind_of(AllocKind kind) {
  switch (kind) {
    case AllocKind::Device:
    case AllocKind::Pool:
    case AllocKind::VmmReserve:
    case AllocKind::VmmPhysical:
    case AllocKind::VmmMapping:
    case AllocKind::IpcImport:
    case AllocKind::ImportedHandle:
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

int data_type_bytes(DataType type) {
  switch (type) {
    case DataType::Int8:
    case DataType::Uint8:
    case DataType::Float8e4m3:
    case DataType::Float8e5m2: return 1;
    case DataType::Float16:
    case DataType::Bfloat16:
    case DataType::Int16: return 2;
    case DataType::Int32:
    case DataType::Uint32:
    case DataType::Float32: return 4;
    case DataType::Int64:
    case DataType::Uint64:
    case DataType::Float64: return 8;
    case DataType::Unknown:
    case DataType::Other: return 0;
  }
  return 0;
}

bool is_point_to_point(CollectiveKind kind) {
  return kind == CollectiveKind::Send || kind == CollectiveKind::Recv;
}

}  // namespace apptracer
