// The tracer as the process's NVTX tool: every NVTX v3 instance (each library
// that compiled nvtx3 in: PyTorch, NCCL, the program) finds us through
// NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2 with its export
// table; we fill its slots with functions that append Nvtx records. Push/pop
// and start/end ranges, marks, domains and registered strings are recorded;
// wide-character messages, categories, colors and payloads are not.
#pragma once

#include "translate/capture_context.h"
#include "translate/nvtx_abi.h"

namespace apptracer {

// Where NVTX calls append their records; nullptr (before the tracer starts,
// or when it does not trace) drops them.
void set_nvtx_context(CaptureContext* ctx);

// Fills one NVTX instance's slots; 1 when it took them, 0 otherwise (the
// instance then stays a no-op).
int initialize_nvtx_injection(nvtx_abi::GetExportTable get_export_table);

}  // namespace apptracer
