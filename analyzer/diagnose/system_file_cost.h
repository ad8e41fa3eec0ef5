// The link model of a system file (`apptracer links -o system.json`, issue
// 20): per measured path, t = latency + bytes / BW(bytes), BW piecewise
// constant over transfer sizes. The JSON read here:
//
//   { "machine": {...}, "date": "...",
//     "paths": [ { "kind": "HtoD",            HtoD, DtoH, DtoD, PtoP, HtoH
//                  "host_memory": "pinned",   pageable, pinned, managed, device
//                  "device": 0,               optional: any device when absent
//                  "numa_node": 0,            optional: any node when absent
//                  "latency_ns": 2400,
//                  "bandwidth": [ {"from_bytes": 0, "gbps": 8.0},
//                                 {"from_bytes": 1048576, "gbps": 24.5} ] } ] }
//
// gbps is 10^9 bytes per second; the piece with the largest from_bytes not
// above a transfer's size gives its bandwidth. A path asked for matches the
// entries of its kind and host memory; of those, one naming its device and
// NUMA node is preferred over one that leaves them out.
#pragma once

#include <string>
#include <vector>

#include "transfer_cost.h"

namespace apptracer::diagnose {

struct SystemPath {
  TransferPath path;  // device and numa_node: nullopt = any
  double latency_ns = 0;
  std::vector<std::pair<int64_t, double>> bandwidth;  // (from_bytes, GB/s), ascending
};

class SystemFileCost : public TransferCost {
 public:
  // Throws std::runtime_error with one line naming the file and what is wrong.
  explicit SystemFileCost(const std::string& path);
  SystemFileCost(std::string source, std::vector<SystemPath> paths);

  std::optional<double> time_ns(const TransferPath& path, int64_t bytes) const override;
  std::string describe(const TransferPath& path) const override;

 private:
  const SystemPath* find(const TransferPath& path) const;
  std::string source_;
  std::vector<SystemPath> paths_;
};

// Parses a system file's text; `source` names it in error messages.
std::vector<SystemPath> parse_system_file(const std::string& text, const std::string& source);

}  // namespace apptracer::diagnose
