#include "child_cost.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace apptracer::bench {

ChildCost run_child(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    execv(args[0], args.data());
    std::perror(args[0]);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(child, &status, 0, &usage) < 0) throw std::runtime_error("wait4 failed");
  ChildCost cost;
  cost.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cost.user_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6;
  cost.system_s = usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  cost.peak_mib = usage.ru_maxrss / 1024.0;  // Linux reports KiB
  cost.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return cost;
}

}  // namespace apptracer::bench
