// A sanitizer-only run (the second run of the two-run scheme) has no CUPTI:
// the allocations its exact ranges resolve into come from the sanitizer's
// resource callbacks instead, as Allocation and Free records.
#pragma once

#include <cstdint>
#include <optional>

#include "apptracer/enums.h"
#include "buffer/allocation_registry.h"
#include "buffer/record_buffers.h"

namespace apptracer::exact {

// Which resource callback reported the memory.
enum class MemoryOrigin { Device, PinnedHost, StreamOrdered };

// Whether the sanitizer reports another GPU's allocation mapped into this
// context (peer access enabled): the same memory, at the same address, that
// its own GPU's callback reported, not an allocation of its own.
bool is_peer_mapping(uint32_t flags);

// The kind of memory the sanitizer reports (flags: its
// Sanitizer_ResourceMemoryFlags), or nothing for memory that is no
// allocation of the program's (a module's __device__ variables, a peer
// mapping).
std::optional<AllocKind> allocation_kind(uint32_t flags, MemoryOrigin origin);

void record_allocation(RecordBuffers& buffers, AllocationRegistry& registry, uint64_t address,
                       uint64_t bytes, AllocKind kind, int32_t device, uint64_t ns);
void record_free(RecordBuffers& buffers, AllocationRegistry& registry, uint64_t address,
                 uint64_t ns);

}  // namespace apptracer::exact
