// Enumerations stored as integers in the trace database.
//
// Each enum is declared once through an X-macro so that the C++ enum, its
// printable names and the `enum_values` table written into every trace come
// from the same list. The numbers are part of the database contract: append,
// never renumber.
#pragma once

#include <cstdint>
#include <string_view>

namespace apptracer {

// Which API family a row of `api_calls` belongs to.
#define APPTRACER_API_DOMAINS(X) \
  X(Runtime, 1, "runtime")       \
  X(Driver, 2, "driver")         \
  X(Nvtx, 3, "nvtx")             \
  X(Host, 4, "host")

// What kind of memory an `allocations` row describes.
#define APPTRACER_ALLOC_KINDS(X)                  \
  X(Device, 1, "device")                          \
  X(PinnedHost, 2, "pinned host")                 \
  X(WriteCombinedHost, 3, "write-combined host")  \
  X(MappedHost, 4, "mapped host")                 \
  X(RegisteredHost, 5, "registered host")         \
  X(Managed, 6, "managed")                        \
  X(PageableHost, 7, "pageable host")             \
  X(Pool, 8, "pool")                              \
  X(VmmReserve, 9, "vmm reserve")                 \
  X(VmmPhysical, 10, "vmm physical")              \
  X(VmmMapping, 11, "vmm mapping")                \
  X(Array, 12, "array")

// The memory an endpoint of a copy (or a memset target) lives in. Numbered
// like CUPTI's CUpti_ActivityMemoryKind so activity records map directly.
#define APPTRACER_MEMORY_KINDS(X)    \
  X(Unknown, 0, "unknown")           \
  X(Pageable, 1, "pageable")         \
  X(Pinned, 2, "pinned")             \
  X(Device, 3, "device")             \
  X(Array, 4, "array")               \
  X(Managed, 5, "managed")           \
  X(DeviceStatic, 6, "device static") \
  X(ManagedStatic, 7, "managed static")

// Direction of a `memcpys` row. Array endpoints are folded into host/device.
#define APPTRACER_COPY_KINDS(X) \
  X(Unknown, 0, "unknown")      \
  X(HtoD, 1, "HtoD")            \
  X(DtoH, 2, "DtoH")            \
  X(DtoD, 3, "DtoD")            \
  X(HtoH, 4, "HtoH")            \
  X(PtoP, 5, "PtoP")            \
  X(Prefetch, 6, "prefetch")

// What a `syncs` row waited for.
#define APPTRACER_SYNC_KINDS(X) \
  X(Device, 1, "device")        \
  X(Stream, 2, "stream")        \
  X(Event, 3, "event")          \
  X(Context, 4, "context")

// `stream_events` rows: an event recorded into a stream, or a stream made to
// wait for an event. Together they order work across streams.
#define APPTRACER_STREAM_EVENT_KINDS(X) \
  X(Record, 1, "record")                \
  X(Wait, 2, "wait")

// How a kernel was launched.
#define APPTRACER_LAUNCH_KINDS(X)      \
  X(Driver, 1, "driver")               \
  X(DriverEx, 2, "driver ex")          \
  X(Cooperative, 3, "cooperative")     \
  X(Graph, 4, "graph")                 \
  X(ActivityOnly, 5, "activity only")

// How a kernel accesses the memory a parameter points to.
#define APPTRACER_ACCESS_KINDS(X) \
  X(Unknown, 0, "unknown")        \
  X(Read, 1, "r")                 \
  X(Write, 2, "w")                \
  X(ReadWrite, 3, "rw")

// How an access was decided.
#define APPTRACER_ACCESS_SOURCES(X)            \
  X(None, 0, "none")                           \
  X(Assumed, 1, "assumed")                     \
  X(ConstSignature, 2, "const signature")      \
  X(Sanitizer, 3, "sanitizer")                 \
  X(Library, 4, "library")

#define APPTRACER_ENUM_MEMBER(name, value, text) name = value,

enum class ApiDomain : uint8_t { APPTRACER_API_DOMAINS(APPTRACER_ENUM_MEMBER) };
enum class AllocKind : uint8_t { APPTRACER_ALLOC_KINDS(APPTRACER_ENUM_MEMBER) };
enum class MemoryKind : uint8_t { APPTRACER_MEMORY_KINDS(APPTRACER_ENUM_MEMBER) };
enum class CopyKind : uint8_t { APPTRACER_COPY_KINDS(APPTRACER_ENUM_MEMBER) };
enum class SyncKind : uint8_t { APPTRACER_SYNC_KINDS(APPTRACER_ENUM_MEMBER) };
enum class StreamEventKind : uint8_t { APPTRACER_STREAM_EVENT_KINDS(APPTRACER_ENUM_MEMBER) };
enum class LaunchKind : uint8_t { APPTRACER_LAUNCH_KINDS(APPTRACER_ENUM_MEMBER) };
enum class AccessKind : uint8_t { APPTRACER_ACCESS_KINDS(APPTRACER_ENUM_MEMBER) };
enum class AccessSource : uint8_t { APPTRACER_ACCESS_SOURCES(APPTRACER_ENUM_MEMBER) };

#undef APPTRACER_ENUM_MEMBER

// Printable name of an enum value ("?" for a value not in the list).
std::string_view to_string(ApiDomain v);
std::string_view to_string(AllocKind v);
std::string_view to_string(MemoryKind v);
std::string_view to_string(CopyKind v);
std::string_view to_string(SyncKind v);
std::string_view to_string(StreamEventKind v);
std::string_view to_string(LaunchKind v);
std::string_view to_string(AccessKind v);
std::string_view to_string(AccessSource v);

// The memory kind of an allocation, as a copy endpoint sees it.
MemoryKind memory_kind_of(AllocKind kind);

// Whether memory of this kind lives on a GPU (for copy direction).
bool is_device_memory(MemoryKind kind);

}  // namespace apptracer
