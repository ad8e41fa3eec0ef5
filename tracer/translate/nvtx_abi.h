// The part of NVTX v3's tool interface the tracer implements, declared here
// from NVTX's nvtxDetail/nvtxTypes.h and nvToolsExt.h (stable ABI): including
// nvToolsExt.h would compile an NVTX instance of our own into the tracer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace apptracer::nvtx_abi {

using FunctionPointer = void (*)();
using FunctionTable = FunctionPointer**;  // addresses of an instance's slots; [0] unused
using GetExportTable = const void* (*)(uint32_t export_table_id);

constexpr uint32_t kExportTableCallbacks = 1;  // NVTX_ETID_CALLBACKS

struct ExportTableCallbacks {
  size_t struct_size;
  int (*GetModuleFunctionTable)(int module, FunctionTable* out_table, unsigned int* out_size);
};

// NvtxCallbackModule
constexpr int kModuleCore = 1;
constexpr int kModuleCore2 = 5;

// NVTX_CBID_CORE_*
enum CoreSlot : unsigned {
  kMarkEx = 1,
  kMarkA = 2,
  kRangeStartEx = 4,
  kRangeStartA = 5,
  kRangeEnd = 7,
  kRangePushEx = 8,
  kRangePushA = 9,
  kRangePop = 11,
};

// NVTX_CBID_CORE2_*
enum Core2Slot : unsigned {
  kDomainMarkEx = 1,
  kDomainRangeStartEx = 2,
  kDomainRangeEnd = 3,
  kDomainRangePushEx = 4,
  kDomainRangePop = 5,
  kDomainRegisterStringA = 10,
  kDomainCreateA = 12,
  kDomainDestroy = 14,
};

// nvtxMessageType_t
constexpr int32_t kMessageAscii = 1;
constexpr int32_t kMessageRegistered = 3;

// nvtxEventAttributes_v2
struct EventAttributes {
  uint16_t version;
  uint16_t size;
  uint32_t category;
  int32_t color_type;
  uint32_t color;
  int32_t payload_type;
  int32_t reserved0;
  uint64_t payload;
  int32_t message_type;
  const void* message;  // const char*, const wchar_t* or a registered string's handle
};
static_assert(sizeof(EventAttributes) == 48 && offsetof(EventAttributes, message) == 40,
              "nvtxEventAttributes_v2's layout");

constexpr int kNoPushPopTracking = -2;  // NVTX_NO_PUSH_POP_TRACKING

}  // namespace apptracer::nvtx_abi
