#include "apptracer/gpu_identity.h"

#include <cctype>
#include <fstream>

namespace apptracer {

std::string format_gpu_uuid(const char (&bytes)[16]) {
  static const char* digits = "0123456789abcdef";
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    auto byte = static_cast<unsigned char>(bytes[i]);
    out += digits[byte >> 4];
    out += digits[byte & 15];
  }
  return out;
}

int numa_node_of_pci(std::string bus_id, const std::string& sys_root) {
  for (char& c : bus_id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // The driver reports a 8-digit domain ("00000000:17:00.0"); sysfs uses 4.
  if (bus_id.size() > 12 && bus_id.find(':') == 8) bus_id = bus_id.substr(4);
  std::string root = sys_root.empty() || sys_root.back() == '/' ? sys_root : sys_root + "/";
  std::ifstream in(root + "sys/bus/pci/devices/" + bus_id + "/numa_node");
  int node = -1;
  if (!(in >> node)) return -1;
  return node;
}

}  // namespace apptracer
