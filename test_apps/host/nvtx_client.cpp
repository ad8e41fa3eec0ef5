// A program with an NVTX v3 instance of its own, as nvtx3's headers build one
// (nvtxDetail/nvtxInit.h): at its first NVTX call it loads the tool named by
// NVTX_INJECTION64_PATH and hands it its slots; then nested ranges on two
// threads, a start/end range and a mark. No CUDA: it runs on CPU, in CI.
// `--loop N`: N push+pop pairs on one thread instead, timed (bench/run.sh's
// nvtx section); its last line is the cost of a pair in ns.
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

using FunctionPointer = void (*)();
using FunctionTable = FunctionPointer**;
struct ExportTableCallbacks {
  size_t struct_size;
  int (*GetModuleFunctionTable)(int module, FunctionTable* out_table, unsigned int* out_size);
};

constexpr unsigned kSlots = 16;  // NVTX_CBID_CORE_SIZE
FunctionPointer core[kSlots];
FunctionPointer* core_table[kSlots];

int get_module(int module, FunctionTable* table, unsigned* size) {
  if (module != 1) return 0;  // NVTX_CB_MODULE_CORE only
  *table = core_table;
  *size = kSlots;
  return 1;
}

const void* export_table(uint32_t id) {
  static const ExportTableCallbacks callbacks{sizeof(ExportTableCallbacks), get_module};
  return id == 1 ? &callbacks : nullptr;
}

// Returns the tool's answer: 1 when it took the slots, 0 when there is none.
int load_tool() {
  for (unsigned i = 0; i < kSlots; ++i) core_table[i] = &core[i];
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (!path || !*path) return 0;
  void* tool = dlopen(path, RTLD_LAZY);
  if (!tool) return 0;
  using Init = int (*)(const void* (*)(uint32_t));
  auto init = reinterpret_cast<Init>(dlsym(tool, "InitializeInjectionNvtx2"));
  return init ? init(export_table) : 0;
}

template <typename Function>
Function* slot(unsigned id) {
  return reinterpret_cast<Function*>(core[id]);
}

void nested(const char* outer, const char* inner) {
  auto push = slot<int(const char*)>(9);  // RangePushA
  auto pop = slot<int()>(11);             // RangePop
  if (!push || !pop) return;
  push(outer);
  push(inner);
  pop();
  pop();
}

// What nvtx3 calls when no tool took its slots: an empty function.
int no_tool_push(const char*) { return 0; }
int no_tool_pop() { return 0; }

int time_pairs(long pairs) {
  auto push = slot<int(const char*)>(9);
  auto pop = slot<int()>(11);
  if (!push) push = no_tool_push;
  if (!pop) pop = no_tool_pop;
  auto begin = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) {
    push("step");
    pop();
  }
  std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - begin;
  std::printf("%.1f\n", took.count() / static_cast<double>(pairs));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int loaded = load_tool();
  if (argc == 3 && std::strcmp(argv[1], "--loop") == 0) return time_pairs(std::atol(argv[2]));
  std::printf("nvtx_client: tool %s\n", loaded ? "loaded" : "absent");
  nested("main outer", "main inner");
  std::thread worker(nested, "worker outer", "worker inner");
  worker.join();
  auto start = slot<uint64_t(const char*)>(5);  // RangeStartA
  auto end = slot<void(uint64_t)>(7);           // RangeEnd
  auto mark = slot<void(const char*)>(2);       // MarkA
  if (start && end && mark) {
    uint64_t range = start("load");
    mark("checkpoint");
    end(range);
  }
  return 0;
}
