// How a GPU is named and where it sits, shared by the tracer (its `devices`
// rows) and `apptracer links` (its system file), so both say it the same way.
#pragma once

#include <string>

namespace apptracer {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi writes a UUID,
// from the driver's 16 bytes (CUuuid::bytes).
std::string format_gpu_uuid(const char (&bytes)[16]);

// The NUMA node of the PCI device with this bus id (as the CUDA driver
// writes it, "00000000:17:00.0" or "0000:17:00.0"), read from
// `sys_root`/sys/bus/pci/devices; -1 when unknown.
int numa_node_of_pci(std::string bus_id, const std::string& sys_root = "/");

}  // namespace apptracer
