#include "base/own_code.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <ucontext.h>

#include <algorithm>
#include <cstring>

#include "base/signal_line.h"

namespace apptracer {

namespace {

struct Search {
  uintptr_t symbol;
  OwnCode* found;
};

int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds = false;
  uintptr_t begin = UINTPTR_MAX, end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    if (search->symbol >= start && search->symbol < start + segment.p_memsz) holds = true;
    if (segment.p_flags & PF_X) {
      begin = std::min(begin, start);
      end = std::max(end, start + segment.p_memsz);
    }
  }
  if (!holds || begin >= end) return 0;
  search->found->begin = begin;
  search->found->end = end;
  return 1;
}

const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    default: return "a fatal signal";
  }
}

}  // namespace

OwnCode own_code_of(const void* symbol) {
  OwnCode code;
  Dl_info info{};
  if (!dladdr(symbol, &info) || !info.dli_fbase) return code;
  Search search{reinterpret_cast<uintptr_t>(symbol), &code};
  if (!dl_iterate_phdr(find_object, &search)) return OwnCode{};
  code.base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  const char* file = info.dli_fname ? info.dli_fname : "";
  const char* slash = std::strrchr(file, '/');
  std::strncpy(code.name, slash ? slash + 1 : file, sizeof code.name - 1);
  return code;
}

size_t describe_own_fault(char* out, size_t capacity, int signal_number, const OwnCode& code, uintptr_t pc) {
  if (capacity == 0) return 0;
  SignalLine line{out, capacity};
  out[0] = '\0';
  line.text("apptracer: ");
  line.text(signal_name(signal_number));
  line.text(" in apptracer's own code (");
  line.text(code.name[0] ? code.name : "libapptracer.so");
  line.text("+");
  line.hex(pc - code.base);
  line.text("), not the program's: please report it with this line; what was recorded is written\n");
  return line.length;
}

uintptr_t faulting_pc(const void* signal_context) {
  if (!signal_context) return 0;
  const auto* context = static_cast<const ucontext_t*>(signal_context);
#if defined(__x86_64__)
  return static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(context->uc_mcontext.pc);
#else
  (void)context;
  return 0;
#endif
}

}  // namespace apptracer
