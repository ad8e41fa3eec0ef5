// Runs a command as a child process and measures what it cost: wall time,
// CPU time and peak resident memory (from wait4's rusage). Its stdout goes to
// /dev/null: the benchmarks time the work, not the printing to a terminal.
#pragma once

#include <string>
#include <vector>

namespace apptracer::bench {

struct ChildCost {
  double wall_s = 0;
  double user_s = 0;
  double system_s = 0;
  double peak_mib = 0;
  int exit_code = -1;  // -1 when it did not exit normally
};

ChildCost run_child(const std::vector<std::string>& argv);

}  // namespace apptracer::bench
