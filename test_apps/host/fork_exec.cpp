// Allocates a block, forks; the child allocates its own block and execs this
// program again, which allocates a third. Each process's trace must hold its
// own block only (tests/tracer/host_memory_test.py). No CUDA.
//   fork_exec            the parent
//   fork_exec exec-child what the child runs
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int block(size_t bytes, unsigned char seed) {
  auto* p = static_cast<unsigned char*>(std::malloc(bytes));
  std::memset(p, seed, bytes);
  int sum = p[0] + p[bytes - 1];
  std::free(p);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "exec-child") == 0) {
    std::printf("exec'd child %d\n", block(300003, 3));
    return 0;
  }
  int parent_sum = block(300001, 1);
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    std::printf("forked child %d\n", block(300002, 2));
    std::fflush(stdout);
    execl("/proc/self/exe", argv[0], "exec-child", static_cast<char*>(nullptr));  // variadic form on purpose
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("parent %d, child exit %d\n", parent_sum, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
