#include "analyzer/links/host_topology.h"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace apptracer::links {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Names in `dir` that start with `prefix` followed by a number, as numbers.
std::vector<int> numbered_entries(const std::string& dir, const std::string& prefix) {
  std::vector<int> numbers;
  DIR* handle = opendir(dir.c_str());
  if (!handle) return numbers;
  while (dirent* entry = readdir(handle)) {
    std::string name = entry->d_name;
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) continue;
    std::string digits = name.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    numbers.push_back(std::stoi(digits));
  }
  closedir(handle);
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

std::string cpu_model(const std::string& root) {
  std::ifstream in(root + "proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

int count_sockets(const std::string& root) {
  std::set<std::string> packages;
  std::string cpus = root + "sys/devices/system/cpu/";
  for (int cpu : numbered_entries(cpus, "cpu")) {
    std::string id = read_text(cpus + "cpu" + std::to_string(cpu) + "/topology/physical_package_id");
    if (!id.empty()) packages.insert(id);
  }
  return static_cast<int>(packages.size());
}

int64_t node_memory(const std::string& node_dir) {
  std::ifstream in(node_dir + "/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find("MemTotal:");
    if (at == std::string::npos) continue;
    std::istringstream fields(line.substr(at + 9));
    int64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

// hwloc 2's object counts, through the handful of exported functions that
// need no structure layouts. Types and depths as in hwloc 2's hwloc.h.
struct HwlocCounts {
  int packages = -1;
  int numa_nodes = -1;
};

HwlocCounts hwloc_counts(std::string& why_not) {
  HwlocCounts counts;
  void* library = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    why_not = "hwloc (libhwloc.so.15 not found: sockets and NUMA nodes from /sys only)";
    return counts;
  }
  using Topology = void*;
  auto api_version = reinterpret_cast<unsigned (*)()>(dlsym(library, "hwloc_get_api_version"));
  auto init = reinterpret_cast<int (*)(Topology*)>(dlsym(library, "hwloc_topology_init"));
  auto load = reinterpret_cast<int (*)(Topology)>(dlsym(library, "hwloc_topology_load"));
  auto destroy = reinterpret_cast<void (*)(Topology)>(dlsym(library, "hwloc_topology_destroy"));
  auto type_depth = reinterpret_cast<int (*)(Topology, int)>(dlsym(library, "hwloc_get_type_depth"));
  auto objects_at =
      reinterpret_cast<unsigned (*)(Topology, int)>(dlsym(library, "hwloc_get_nbobjs_by_depth"));
  constexpr int kPackage = 1, kNumaNode = 13, kDepthUnknown = -1, kDepthMultiple = -2;
  if (!api_version || !init || !load || !destroy || !type_depth || !objects_at ||
      api_version() >> 16 != 2) {
    why_not = "hwloc (libhwloc.so.15 is not hwloc 2: sockets and NUMA nodes from /sys only)";
    dlclose(library);
    return counts;
  }
  Topology topology = nullptr;
  if (init(&topology) == 0 && load(topology) == 0) {
    auto count = [&](int type) {
      int depth = type_depth(topology, type);
      return depth == kDepthUnknown || depth == kDepthMultiple
                 ? -1
                 : static_cast<int>(objects_at(topology, depth));
    };
    counts.packages = count(kPackage);
    counts.numa_nodes = count(kNumaNode);
  } else {
    why_not = "hwloc (libhwloc.so.15 could not load the topology: /sys only)";
  }
  if (topology) destroy(topology);
  dlclose(library);
  return counts;
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream ranges(text);
  std::string range;
  while (std::getline(ranges, range, ',')) {
    if (range.empty()) continue;
    size_t dash = range.find('-');
    try {
      int first = std::stoi(range.substr(0, dash));
      int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
      if (first < 0 || last < first) return {};
      for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    } catch (const std::exception&) {
      return {};
    }
  }
  return cpus;
}

HostTopology read_host_topology(const std::string& sys_root) {
  std::string root = sys_root.empty() || sys_root.back() == '/' ? sys_root : sys_root + "/";
  HostTopology topology;
  char name[256] = {};
  if (root == "/" && gethostname(name, sizeof name - 1) == 0) {
    topology.hostname = name;
  } else {
    topology.hostname = read_text(root + "proc/sys/kernel/hostname");
  }
  topology.cpu_model = cpu_model(root);
  topology.sockets = count_sockets(root);
  std::string nodes = root + "sys/devices/system/node/";
  for (int node : numbered_entries(nodes, "node")) {
    std::string dir = nodes + "node" + std::to_string(node);
    int64_t memory = node_memory(dir);
    // Nodes without memory (CPU-only or GPU-attached) hold no host buffers.
    if (memory > 0) topology.numa_nodes.push_back({node, read_text(dir + "/cpulist"), memory});
  }
  if (topology.numa_nodes.empty()) {
    topology.unavailable.push_back("NUMA nodes (no " + nodes + "): host buffers not placed");
  }
  if (root != "/") return topology;
  std::string why_not;
  HwlocCounts counts = hwloc_counts(why_not);
  if (!why_not.empty()) topology.unavailable.push_back(why_not);
  if (counts.packages > 0 && counts.packages != topology.sockets) {
    topology.unavailable.push_back("socket count: /sys says " + std::to_string(topology.sockets) +
                                   ", hwloc " + std::to_string(counts.packages) + " (kept /sys)");
  }
  if (counts.numa_nodes > 0 && counts.numa_nodes != static_cast<int>(topology.numa_nodes.size())) {
    topology.unavailable.push_back("NUMA node count: /sys says " +
                                   std::to_string(topology.numa_nodes.size()) + " with memory, hwloc " +
                                   std::to_string(counts.numa_nodes) + " (kept /sys)");
  }
  return topology;
}

}  // namespace apptracer::links
