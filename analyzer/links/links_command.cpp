// `apptracer links [-o system.json] [--quick] [--force]`: enumerates this
// machine, measures each logical path (path_plan.h, link_bench.h), fits the
// transfer-time model per path (model/link_model.h), measures what a CUDA
// graph's launch costs on its first GPU (graph_bench.h) and what tracing
// adds to a launch there (tracing_cost.h), and writes the system file that `apptracer whatif` replays traces against.

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "analyzer/commands.h"
#include "analyzer/links/cuda_driver.h"
#include "analyzer/links/gpu_inventory.h"
#include "analyzer/links/graph_bench.h"
#include "analyzer/links/host_topology.h"
#include "analyzer/links/link_bench.h"
#include "analyzer/links/nvml_topology.h"
#include "analyzer/output_file.h"
#include "analyzer/links/path_plan.h"
#include "analyzer/links/tracing_cost.h"
#include "analyzer/record/tracer_library.h"
#include "analyzer/progress.h"
#include "analyzer/model/system_file.h"
#include "analyzer/table/table_format.h"

namespace apptracer {

namespace {

struct LinksOptions {
  std::string output = "system.json";
  bool quick = false;
  bool force = false;
  bool launch_loop = false;  // the child of the tracing cost's measurement (links/tracing_cost.h)
  int gpu = 0;
};

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

// The kernel driver's version, where NVML could not say.
std::string proc_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string word;
  while (in >> word) {
    if (word == "Module" && in >> word) return word;
  }
  return "";
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

model::Machine describe_machine(const links::GpuInventory& inventory, bool quick) {
  model::Machine machine;
  links::HostTopology host = links::read_host_topology();
  machine.hostname = host.hostname;
  machine.cpu_model = host.cpu_model;
  machine.cpu_sockets = host.sockets;
  machine.numa_nodes = host.numa_nodes;
  machine.unavailable = host.unavailable;
  machine.gpus = inventory.gpus;
  machine.connections = inventory.connections;
  links::NvmlTopology nvml = links::read_nvml_topology(machine.gpus, machine.connections);
  if (!nvml.available) machine.unavailable.push_back(nvml.why_not);
  machine.driver_version = nvml.driver_version.empty() ? proc_driver_version() : nvml.driver_version;
  links::load_cuda_driver().cuDriverGetVersion(&machine.cuda_driver_version);
  machine.measured_at = utc_now();
  machine.quick = quick;
  return machine;
}

// One row per path: its fixed cost, the bandwidth it reaches at a few sizes,
// and (host paths) how much of it is left while the opposite direction runs.
Table summary(const model::SystemModel& system) {
  Table table{"links", {"path", "latency (us)", "64 KiB (GB/s)", "1 MiB (GB/s)", "16 MiB (GB/s)",
                        "largest (GB/s)", "both ways (GB/s)", "duplex"}, {}};
  auto rate = [](const model::LinkModel& m, int64_t bytes) {
    return Cell(static_cast<double>(bytes) / m.transfer_ns(bytes));
  };
  for (const model::MeasuredPath& path : system.paths) {
    const model::LinkModel& m = path.model;
    int64_t largest = path.samples.empty() ? int64_t{1} << 28 : path.samples.back().bytes;
    const std::optional<model::Duplex>& duplex = path.duplex;
    table.rows.push_back({path.path.name(), Cell(m.latency_ns() / 1000), rate(m, 64 << 10),
                          rate(m, 1 << 20), rate(m, 16 << 20), rate(m, largest),
                          duplex ? Cell(duplex->gbps) : Cell(), duplex ? Cell(duplex->factor) : Cell()});
  }
  return table;
}

// One line: what a graph's launch costs, on the GPU and on the host.
std::string graph_launch_line(const model::GraphLaunch& g) {
  char text[256];
  std::snprintf(text, sizeof text,
                "graph launch (GPU %d): %.2f us between dependent nodes on the GPU; cuGraphLaunch %.2f us "
                "+ %.4f us per node on the host",
                g.gpu, g.node_ns / 1000, g.launch_ns / 1000, g.launch_ns_per_node / 1000);
  return text;
}

// One line: what tracing adds to a launch.
std::string tracing_cost_line(const model::TracingCost& c) {
  char text[384];
  int n = std::snprintf(text, sizeof text,
                        "tracing (GPU %d): %s takes %.2f us untraced, %.2f us more traced, %.2f us more "
                        "at --level timing",
                        c.gpu, c.api.c_str(), c.untraced_ns / 1000, c.added_ns(model::TracingLevel::Full) / 1000,
                        c.added_ns(model::TracingLevel::Timing) / 1000);
  if (c.callbacks_measured() && n > 0 && static_cast<size_t>(n) < sizeof text) {
    std::snprintf(text + n, sizeof text - n, " (of which apptracer's callbacks %.2f and %.2f us, CUPTI's the rest)",
                  c.full_callbacks_ns / 1000, c.timing_callbacks_ns / 1000);
  }
  return text;
}

int run_launch_loop(const LinksOptions& options) {
  links::LaunchLoop loop = links::launch_loop_ns(links::load_cuda_driver(), options.gpu);
  std::printf("%.1f %s\n", loop.ns, loop.api.c_str());
  return 0;
}

int run_links(const LinksOptions& options) {
  if (options.launch_loop) return run_launch_loop(options);
  // The output rules are checked before minutes of measuring, not after.
  OutputFile file(options.output, {}, options.force);
  const links::CudaDriver& driver = links::load_cuda_driver();
  links::GpuInventory inventory = links::read_gpu_inventory(driver);
  model::SystemModel system;
  system.machine = describe_machine(inventory, options.quick);

  links::PlanInput input;
  input.gpus = inventory.gpus;
  input.connections = inventory.connections;
  input.managed = inventory.managed;
  input.quick = options.quick;
  std::map<int, std::vector<int>> node_cpus;
  for (const model::NumaNodeInfo& node : system.machine.numa_nodes) {
    input.numa_nodes.push_back(node.id);
    node_cpus[node.id] = links::parse_cpu_list(node.cpus);
  }
  std::vector<links::PlannedPath> plan = links::plan_paths(input);
  std::vector<links::PlannedDuplex> duplex_plan = links::plan_duplex(input);
  for (size_t i = 0; i < inventory.managed.size(); ++i) {
    if (!inventory.managed[i]) {
      system.machine.unavailable.push_back("managed memory paths of GPU " + std::to_string(i) +
                                           " (no concurrent managed access)");
    }
  }
  if (!system.machine.unavailable.empty()) {
    std::cerr << "links: unavailable: " << join(system.machine.unavailable, "; ") << "\n";
  }

  int64_t total = 0;
  for (const links::PlannedPath& planned : plan) total += planned.samples();
  for (const links::PlannedDuplex& planned : duplex_plan) total += planned.samples();
  int64_t graph_samples =
      static_cast<int64_t>(links::graph_sizes().size()) * links::graph_repetitions(options.quick);
  total += graph_samples;
  std::string library = find_tracer_library();
  int64_t tracing_samples = library.empty() ? 0 : 3 * int64_t{links::tracing_cost_rounds(options.quick)};
  total += tracing_samples;
  size_t largest = static_cast<size_t>(links::planned_sizes(options.quick).back());
  links::LinkBench bench(driver, inventory.gpus, largest, node_cpus);
  Progress progress("links");
  int64_t done = 0;
  std::vector<std::string> failed;
  for (const links::PlannedPath& planned : plan) {
    std::string name = planned.path.name();
    int64_t before = done;
    try {
      system.paths.push_back(bench.measure(planned, [&] { progress.update(name, ++done, total); }));
    } catch (const links::DriverError& error) {
      failed.push_back(name + ": " + error.what());
      done = before + planned.samples();
    }
  }
  for (const links::PlannedDuplex& planned : duplex_plan) {
    model::MeasuredPath* htod = system.find(planned.htod());
    model::MeasuredPath* dtoh = system.find(planned.dtoh());
    if (!htod || !dtoh) {  // a direction failed alone: said above
      done += planned.samples();
      continue;
    }
    std::string name = planned.name();
    int64_t before = done;
    try {
      links::LinkBench::DuplexResult result =
          bench.measure_duplex(planned, [&] { progress.update(name, ++done, total); });
      htod->duplex = result.htod;
      dtoh->duplex = result.dtoh;
    } catch (const links::DriverError& error) {
      failed.push_back(name + ": " + error.what());
      done = before + planned.samples();
    }
  }
  // On the first GPU: a graph's launch costs the same on GPUs of one kind.
  int64_t before_graphs = done;
  try {
    if (inventory.gpus.empty()) throw links::DriverError("no GPU");
    system.graph_launch = links::measure_graph_launch(
        driver, bench.gpu(inventory.gpus.front().ordinal), options.quick,
        [&] { progress.update("graph launch", ++done, total); });
  } catch (const links::DriverError& error) {
    failed.push_back(std::string("graph launch: ") + error.what());
    done = before_graphs + graph_samples;
  }
  // On the same GPU: what tracing adds to each launch, for pricing a traced
  // program's savings against the untraced one.
  if (library.empty()) {
    failed.push_back("tracing cost: libapptracer.so not found beside this apptracer (set APPTRACER_LIBRARY)");
  } else if (!inventory.gpus.empty()) {
    int64_t before_tracing = done;
    try {
      system.tracing_cost = links::measure_tracing_cost(library, inventory.gpus.front().ordinal, options.quick,
                                                        [&] { progress.update("tracing cost", ++done, total); });
    } catch (const std::exception& error) {
      failed.push_back(std::string("tracing cost: ") + error.what());
      done = before_tracing + tracing_samples;
    }
  }
  progress.finish();
  system.machine.unavailable.insert(system.machine.unavailable.end(), failed.begin(), failed.end());
  if (!failed.empty()) std::cerr << "links: not measured: " << join(failed, "; ") << "\n";
  if (system.paths.empty()) throw std::runtime_error("no path could be measured; nothing written");
  file.stream() << model::system_to_json(system);
  file.commit();
  write_tables(std::cout, {summary(system)}, OutputFormat::Table);
  if (system.graph_launch) std::cout << graph_launch_line(*system.graph_launch) << "\n";
  if (system.tracing_cost) std::cout << tracing_cost_line(*system.tracing_cost) << "\n";
  std::cout << "links: " << system.paths.size() << " paths of " << system.describe() << " written to "
            << options.output << "\n";
  return 0;
}

}  // namespace

void add_links_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "links", "Measure this machine's communication paths and write a system file for whatif");
  auto options = std::make_shared<LinksOptions>();
  auto output = written_files(cmd, "System file to write (default system.json)");
  cmd->add_flag("--quick", options->quick, "Fewer sizes and repetitions: under 30 s");
  // The tracing cost's child runs (links/tracing_cost.h), not for users.
  cmd->add_flag("--launch-loop", options->launch_loop)->group("");
  cmd->add_option("--gpu", options->gpu)->group("");
  cmd->callback([&result, options, output] {
    if (!output->path.empty()) options->output = output->path;
    options->force = output->force;
    result = [options] { return run_links(*options); };
  });
}

}  // namespace apptracer
