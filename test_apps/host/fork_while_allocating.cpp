// fork() while other threads allocate: threads malloc and free blocks of
// 4-64 KiB in a loop while the main thread forks children that exit at once.
// Prints, on stderr, how long the fork() calls took (the longest and the
// median), the whole run, and whether every child exited cleanly; on stdout
// the median fork in microseconds (the benchmarks' number). No CUDA.
//   fork_while_allocating [CHILDREN] [THREADS]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  int children = argc > 1 ? std::atoi(argv[1]) : 50;
  int threads = argc > 2 ? std::atoi(argv[2]) : 4;
  std::atomic<bool> stop{false};
  std::vector<std::thread> allocating;
  for (int t = 0; t < threads; ++t) {
    allocating.emplace_back([&stop, t] {
      std::vector<void*> kept(64, nullptr);
      uint64_t state = 0x9e3779b97f4a7c15ull * (t + 1);
      while (!stop.load(std::memory_order_relaxed)) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        void*& slot = kept[state % kept.size()];
        std::free(slot);
        slot = std::malloc(4096 + state % (60 << 10));
      }
      for (void* p : kept) std::free(p);
    });
  }
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  std::vector<double> fork_ms;
  int failed = 0;
  for (int i = 0; i < children; ++i) {
    auto before = Clock::now();
    pid_t child = fork();
    if (child == 0) _exit(0);
    fork_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - before).count());
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      ++failed;
      if (WIFSIGNALED(status)) {
        std::fprintf(stderr, "child %d ended by signal %d\n", child, WTERMSIG(status));
      } else {
        std::fprintf(stderr, "child %d exited with %d\n", child, WEXITSTATUS(status));
      }
    }
  }
  double total_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  stop = true;
  for (std::thread& t : allocating) t.join();
  std::sort(fork_ms.begin(), fork_ms.end());
  std::fprintf(stderr, "forks %d failed %d longest_fork_ms %.3f median_fork_ms %.3f total_ms %.1f\n",
               children, failed, fork_ms.back(), fork_ms[fork_ms.size() / 2], total_ms);
  std::printf("%.1f\n", 1000 * fork_ms[fork_ms.size() / 2]);
  return failed == 0 ? 0 : 1;
}
