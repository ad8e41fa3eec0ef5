#include "analyzer/model/system_file.h"


#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace apptracer::model {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "apptracer system";
// 2: "graph_launch"; 3: "tracing_cost". An older file reads as one without them.
constexpr int kVersion = 3;

json optional_int(const std::optional<int>& value) { return value ? json(*value) : json(); }

json machine_to_json(const Machine& m) {
  json gpus = json::array();
  for (const GpuInfo& g : m.gpus) {
    gpus.push_back({{"ordinal", g.ordinal},
                    {"name", g.name},
                    {"uuid", g.uuid},
                    {"pci_bus_id", g.pci_bus_id},
                    {"numa_node", g.numa_node},
                    {"memory_bytes", g.memory_bytes},
                    {"sm_count", g.sm_count},
                    {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                    {"pcie_generation", optional_int(g.pcie_generation)},
                    {"pcie_width", optional_int(g.pcie_width)},
                    {"nvlinks", g.nvlinks}});
  }
  json nodes = json::array();
  for (const NumaNodeInfo& n : m.numa_nodes) {
    nodes.push_back({{"id", n.id}, {"cpus", n.cpus}, {"memory_bytes", n.memory_bytes}});
  }
  json connections = json::array();
  for (const GpuConnection& c : m.connections) {
    connections.push_back({{"gpu", c.gpu},
                           {"peer", c.peer},
                           {"peer_access", c.peer_access},
                           {"performance_rank", optional_int(c.performance_rank)},
                           {"nvlink", c.nvlink},
                           {"pcie_path", c.pcie_path}});
  }
  return {{"hostname", m.hostname},
          {"cpu_model", m.cpu_model},
          {"cpu_sockets", m.cpu_sockets},
          {"numa_nodes", nodes},
          {"gpus", gpus},
          {"connections", connections},
          {"driver_version", m.driver_version},
          {"cuda_driver_version", m.cuda_driver_version},
          {"measured_at", m.measured_at},
          {"quick", m.quick},
          {"unavailable", m.unavailable}};
}

json path_to_json(const MeasuredPath& p) {
  json samples = json::array();
  for (const SizeSamples& s : p.samples) samples.push_back({{"bytes", s.bytes}, {"ns", s.ns}});
  json bandwidth = json::array();
  for (const BandwidthKnot& k : p.model.knots()) {
    bandwidth.push_back({{"bytes", k.bytes}, {"gbps", k.gbps}});
  }
  json out = {{"name", p.path.name()},
              {"model", {{"latency_ns", p.model.latency_ns()}, {"bandwidth", bandwidth}}},
              {"samples", samples}};
  if (!p.note.empty()) out["note"] = p.note;
  if (p.duplex) {
    out["duplex"] = {{"bytes", p.duplex->bytes}, {"gbps", p.duplex->gbps}, {"factor", p.duplex->factor}};
  }
  return out;
}

json graph_launch_to_json(const GraphLaunch& g) {
  json samples = json::array();
  for (const GraphLaunchSamples& s : g.samples) {
    samples.push_back({{"nodes", s.nodes}, {"node_ns", s.node_ns}, {"launch_ns", s.launch_ns}});
  }
  return {{"gpu", g.gpu},
          {"node_ns", g.node_ns},
          {"launch_ns", g.launch_ns},
          {"launch_ns_per_node", g.launch_ns_per_node},
          {"samples", samples}};
}

// Reading: each field with its type checked, so a wrong file says which key.
template <typename T>
T get(const json& object, const char* key, const T& fallback) {
  auto found = object.find(key);
  if (found == object.end() || found->is_null()) return fallback;
  return found->get<T>();
}

std::optional<int> get_optional_int(const json& object, const char* key) {
  auto found = object.find(key);
  if (found == object.end() || found->is_null()) return std::nullopt;
  return found->get<int>();
}

Machine machine_from_json(const json& j) {
  Machine m;
  m.hostname = get<std::string>(j, "hostname", "");
  m.cpu_model = get<std::string>(j, "cpu_model", "");
  m.cpu_sockets = get<int>(j, "cpu_sockets", 0);
  for (const json& n : get<json>(j, "numa_nodes", json::array())) {
    m.numa_nodes.push_back({n.at("id").get<int>(), get<std::string>(n, "cpus", ""),
                            get<int64_t>(n, "memory_bytes", 0)});
  }
  for (const json& g : get<json>(j, "gpus", json::array())) {
    GpuInfo gpu;
    gpu.ordinal = g.at("ordinal").get<int>();
    gpu.name = get<std::string>(g, "name", "");
    gpu.uuid = get<std::string>(g, "uuid", "");
    gpu.pci_bus_id = get<std::string>(g, "pci_bus_id", "");
    gpu.numa_node = get<int>(g, "numa_node", -1);
    gpu.memory_bytes = get<int64_t>(g, "memory_bytes", 0);
    gpu.sm_count = get<int>(g, "sm_count", 0);
    std::string cc = get<std::string>(g, "compute_capability", "0.0");
    if (std::sscanf(cc.c_str(), "%d.%d", &gpu.cc_major, &gpu.cc_minor) != 2) {
      gpu.cc_major = gpu.cc_minor = 0;
    }
    gpu.pcie_generation = get_optional_int(g, "pcie_generation");
    gpu.pcie_width = get_optional_int(g, "pcie_width");
    gpu.nvlinks = get<int>(g, "nvlinks", 0);
    m.gpus.push_back(gpu);
  }
  for (const json& c : get<json>(j, "connections", json::array())) {
    GpuConnection connection;
    connection.gpu = c.at("gpu").get<int>();
    connection.peer = c.at("peer").get<int>();
    connection.peer_access = get<bool>(c, "peer_access", false);
    connection.performance_rank = get_optional_int(c, "performance_rank");
    connection.nvlink = get<bool>(c, "nvlink", false);
    connection.pcie_path = get<std::string>(c, "pcie_path", "");
    m.connections.push_back(connection);
  }
  m.driver_version = get<std::string>(j, "driver_version", "");
  m.cuda_driver_version = get<int>(j, "cuda_driver_version", 0);
  m.measured_at = get<std::string>(j, "measured_at", "");
  m.quick = get<bool>(j, "quick", false);
  m.unavailable = get<std::vector<std::string>>(j, "unavailable", {});
  return m;
}

MeasuredPath path_from_json(const json& j) {
  MeasuredPath p;
  std::string name = j.at("name").get<std::string>();
  std::optional<LinkPath> path = LinkPath::parse(name);
  if (!path) throw std::invalid_argument("unknown path name '" + name + "'");
  p.path = *path;
  p.note = get<std::string>(j, "note", "");
  for (const json& s : get<json>(j, "samples", json::array())) {
    p.samples.push_back({s.at("bytes").get<int64_t>(), s.at("ns").get<std::vector<double>>()});
  }
  auto model = j.find("model");
  if (model != j.end() && !model->is_null()) {
    std::vector<BandwidthKnot> knots;
    for (const json& k : model->at("bandwidth")) {
      knots.push_back({k.at("bytes").get<int64_t>(), k.at("gbps").get<double>()});
    }
    p.model = LinkModel(model->at("latency_ns").get<double>(), std::move(knots));
  } else {
    std::vector<Sample> flat;
    for (const SizeSamples& size : p.samples) {
      for (double ns : size.ns) flat.push_back({size.bytes, ns});
    }
    if (flat.empty()) throw std::invalid_argument("path " + name + " has neither model nor samples");
    p.model = fit_link_model(flat);
  }
  auto duplex = j.find("duplex");
  if (duplex != j.end() && !duplex->is_null()) {
    double factor = duplex->at("factor").get<double>();
    if (!(factor > 0 && factor <= 1)) {
      throw std::invalid_argument("path " + name + ": duplex factor " + std::to_string(factor) +
                                  " is not in (0, 1]");
    }
    p.duplex = Duplex{get<int64_t>(*duplex, "bytes", 0), get<double>(*duplex, "gbps", 0), factor};
  }
  return p;
}

GraphLaunch graph_launch_from_json(const json& j) {
  std::vector<GraphLaunchSamples> samples;
  for (const json& s : get<json>(j, "samples", json::array())) {
    samples.push_back({s.at("nodes").get<int64_t>(), get<std::vector<double>>(s, "node_ns", {}),
                       get<std::vector<double>>(s, "launch_ns", {})});
  }
  int gpu = get<int>(j, "gpu", 0);
  if (!j.contains("node_ns") || !j.contains("launch_ns")) {
    if (samples.empty()) throw std::invalid_argument("graph_launch has neither node_ns and launch_ns nor samples");
    return fit_graph_launch(gpu, std::move(samples));
  }
  GraphLaunch g;
  g.gpu = gpu;
  g.node_ns = j.at("node_ns").get<double>();
  g.launch_ns = j.at("launch_ns").get<double>();
  g.launch_ns_per_node = get<double>(j, "launch_ns_per_node", 0);
  if (!(g.node_ns >= 0 && g.launch_ns >= 0 && g.launch_ns_per_node >= 0)) {
    throw std::invalid_argument("graph_launch: a negative time");
  }
  g.samples = std::move(samples);
  return g;
}

json tracing_cost_to_json(const TracingCost& c) {
  json out = {{"gpu", c.gpu},
              {"api", c.api},
              {"untraced_ns", c.untraced_ns},
              {"full_ns", c.full_ns},
              {"timing_ns", c.timing_ns},
              {"samples", {{"untraced_ns", c.untraced_samples}, {"full_ns", c.full_samples},
                           {"timing_ns", c.timing_samples}}}};
  if (c.callbacks_measured()) {
    out["full_callbacks_ns"] = c.full_callbacks_ns;
    out["timing_callbacks_ns"] = c.timing_callbacks_ns;
    out["samples"]["full_callbacks_ns"] = c.full_callbacks_samples;
    out["samples"]["timing_callbacks_ns"] = c.timing_callbacks_samples;
  }
  return out;
}

TracingCost tracing_cost_from_json(const json& j) {
  TracingCost c;
  c.gpu = get<int>(j, "gpu", 0);
  c.api = get<std::string>(j, "api", "cuLaunchKernel");
  c.untraced_ns = j.at("untraced_ns").get<double>();
  c.full_ns = j.at("full_ns").get<double>();
  c.timing_ns = j.at("timing_ns").get<double>();
  if (!(c.untraced_ns >= 0 && c.full_ns >= 0 && c.timing_ns >= 0)) {
    throw std::invalid_argument("tracing_cost: a negative time");
  }
  json samples = get<json>(j, "samples", json::object());
  c.untraced_samples = get<std::vector<double>>(samples, "untraced_ns", {});
  c.full_samples = get<std::vector<double>>(samples, "full_ns", {});
  c.timing_samples = get<std::vector<double>>(samples, "timing_ns", {});
  c.full_callbacks_ns = get<double>(j, "full_callbacks_ns", 0);
  c.timing_callbacks_ns = get<double>(j, "timing_callbacks_ns", 0);
  if (!(c.full_callbacks_ns >= 0 && c.timing_callbacks_ns >= 0)) {
    throw std::invalid_argument("tracing_cost: a negative time");
  }
  c.full_callbacks_samples = get<std::vector<double>>(samples, "full_callbacks_ns", {});
  c.timing_callbacks_samples = get<std::vector<double>>(samples, "timing_callbacks_ns", {});
  return c;
}

}  // namespace

std::string system_to_json(const SystemModel& system) {
  json paths = json::array();
  for (const MeasuredPath& p : system.paths) paths.push_back(path_to_json(p));
  json out = {{"format", kFormat},
              {"version", kVersion},
              {"machine", machine_to_json(system.machine)},
              {"paths", paths}};
  if (system.graph_launch) out["graph_launch"] = graph_launch_to_json(*system.graph_launch);
  if (system.tracing_cost) out["tracing_cost"] = tracing_cost_to_json(*system.tracing_cost);
  return out.dump(1) + "\n";
}

SystemModel system_from_json(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& error) {
    throw SystemFileError(source + ": not valid JSON (" + error.what() +
                          "); write one with 'apptracer links -o " + source + "'");
  }
  if (!j.is_object() || j.value("format", "") != kFormat) {
    throw SystemFileError(source + ": not an apptracer system file (no \"format\": \"" + kFormat +
                          "\"); write one with 'apptracer links -o " + source + "'");
  }
  if (j.value("version", 0) > kVersion) {
    throw SystemFileError(source + ": system file version " + std::to_string(j.value("version", 0)) +
                          " is newer than this apptracer understands (" +
                          std::to_string(kVersion) + "); upgrade apptracer");
  }
  try {
    SystemModel system;
    system.machine = machine_from_json(get<json>(j, "machine", json::object()));
    for (const json& path : j.at("paths")) system.paths.push_back(path_from_json(path));
    auto graph_launch = j.find("graph_launch");
    if (graph_launch != j.end() && !graph_launch->is_null()) {
      system.graph_launch = graph_launch_from_json(*graph_launch);
    }
    auto tracing_cost = j.find("tracing_cost");
    if (tracing_cost != j.end() && !tracing_cost->is_null()) {
      system.tracing_cost = tracing_cost_from_json(*tracing_cost);
    }
    return system;
  } catch (const std::exception& error) {
    throw SystemFileError(source + ": malformed system file (" + error.what() + ")");
  }
}

SystemModel load_system(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int error = errno;
    if (error != ENOENT) {
      throw SystemFileError(path + ": cannot read the system file (" + std::strerror(error) + ")");
    }
    throw SystemFileError(path + ": no such system file; measure this machine with 'apptracer links -o " +
                          path + "'");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return system_from_json(text.str(), path);
}

}  // namespace apptracer::model
