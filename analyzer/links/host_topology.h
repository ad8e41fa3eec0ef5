// The host side of the machine: CPU model, sockets, NUMA nodes. Read from
// /proc and /sys (always there on Linux); where libhwloc.so.15 (hwloc 2) is
// installed it is loaded at run time to cross-check the socket and node
// counts, and a disagreement is reported rather than guessed away.
#pragma once

#include <string>
#include <vector>

#include "analyzer/model/system_model.h"

namespace apptracer::links {

struct HostTopology {
  std::string hostname;
  std::string cpu_model;
  int sockets = 0;
  std::vector<model::NumaNodeInfo> numa_nodes;  // nodes with memory; empty: unknown
  std::vector<std::string> unavailable;
};

// `sys_root` is "/" normally; tests point it at a directory of fake files.
HostTopology read_host_topology(const std::string& sys_root = "/");

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; empty for text it cannot read.
std::vector<int> parse_cpu_list(const std::string& text);

}  // namespace apptracer::links
