#!/usr/bin/env python3
"""Re-derives, from the installed torch's own headers, what the tracer's
PyTorch hooks assume: for the allocator tracker (tracer/frameworks/
torch_allocator.cpp) the vtable byte offset of
CUDAAllocator::attachAllocatorTraceTracker and the offsets of the TraceEntry
fields it reads (needs the CUDA headers; skipped without them); for the op
callbacks (tracer/frameworks/torch_ops.cpp) the offset of
RecordFunction::sequence_nr_ and the size of RecordFunctionCallback.
Compiles small programs against the headers; exits 77 without torch or g++.

    torch_allocator_layout.py [EXPECTED_SLOT_OFFSET]   (default 352, torch 2.11)
"""
import os
import shutil
import subprocess
import sys
import tempfile

PROGRAM = r"""
#include <c10/cuda/CUDACachingAllocator.h>
#include <cstddef>
#include <cstdio>
#include <cstring>
using c10::cuda::CUDACachingAllocator::CUDAAllocator;
using Entry = c10::cuda::CUDACachingAllocator::TraceEntry;
int main() {
  auto member = &CUDAAllocator::attachAllocatorTraceTracker;
  long words[2];
  static_assert(sizeof member == sizeof words);
  std::memcpy(words, &member, sizeof words);
  std::printf("slot %ld\n", words[0] - 1);  // Itanium: a virtual's pointer to member is 1 + offset
  std::printf("action %zu device %zu addr %zu stream %zu size %zu mempool %zu\n",
              offsetof(Entry, action_), offsetof(Entry, device_), offsetof(Entry, addr_),
              offsetof(Entry, stream_), offsetof(Entry, size_), offsetof(Entry, mempool_));
}
"""

# RecordFunction's fields are private: its header is read with them public
# (the standard headers it uses are included first, as they are).
RECORD_FUNCTION_PROGRAM = r"""
#include <ATen/core/ivalue.h>
#include <sstream>
#define private public
#include <ATen/record_function.h>
#undef private
#include <cstddef>
#include <cstdio>
int main() {
  std::printf("sequence_nr %zu callback %zu\n", offsetof(at::RecordFunction, sequence_nr_),
              sizeof(at::RecordFunctionCallback));
}
"""
# What torch_ops.cpp assumes: sequence_nr_'s offset, the callback's size.
RECORD_FUNCTION_LAYOUT = {"sequence_nr": 200, "callback": 40}


def compile_and_run(compiler, work, name, program, flags):
    """The program's output, or None after saying why it did not build."""
    import torch
    source, binary = os.path.join(work, name + ".cpp"), os.path.join(work, name)
    with open(source, "w") as f:
        f.write(program)
    build = subprocess.run([compiler, "-O0", "-w", source, *flags, "-o", binary],
                           capture_output=True, text=True)
    if build.returncode != 0:
        print(f"FAIL: cannot compile {name} against torch {torch.__version__}'s headers:\n"
              f"{build.stderr[-3000:]}")
        return None
    return subprocess.run([binary], capture_output=True, text=True).stdout


def check_record_function(compiler, work):
    import torch
    from torch.utils import cpp_extension
    libraries = cpp_extension.library_paths()
    flags = (["-std=c++20"] + [f"-I{p}" for p in cpp_extension.include_paths()] +
             [f"-L{p}" for p in libraries] + ["-ltorch_cpu", "-lc10"] +
             [f"-Wl,-rpath,{p}" for p in libraries])
    out = compile_and_run(compiler, work, "record_function", RECORD_FUNCTION_PROGRAM, flags)
    if out is None:
        return False
    fields = out.split()
    layout = dict(zip(fields[0::2], (int(v) for v in fields[1::2])))
    ok = layout == RECORD_FUNCTION_LAYOUT
    print(f"torch {torch.__version__}: RecordFunction {layout} (tracer assumes "
          f"{RECORD_FUNCTION_LAYOUT}) -> "
          f"{'ok' if ok else 'MISMATCH: update kKnownVersions in torch_ops.cpp'}")
    return ok


def main():
    expected = int(sys.argv[1]) if len(sys.argv) > 1 else 352
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError:
        print("SKIPPED: no torch here")
        return 77
    compiler = shutil.which("g++")
    if compiler is None:
        print("SKIPPED: no g++ here")
        return 77
    work = tempfile.mkdtemp(prefix="torch-layout-")
    ops_ok = check_record_function(compiler, work)
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if not os.path.exists(os.path.join(cuda_home, "include", "cuda_runtime_api.h")):
        print(f"allocator layout: skipped (no CUDA headers under {cuda_home})")
        return 0 if ops_ok else 1
    source, binary = os.path.join(work, "layout.cpp"), os.path.join(work, "layout")
    with open(source, "w") as f:
        f.write(PROGRAM)
    includes = [f"-I{p}" for p in cpp_extension.include_paths()] + [f"-I{cuda_home}/include"]
    build = subprocess.run([compiler, "-std=c++17", "-O0", *includes, source, "-o", binary],
                           capture_output=True, text=True)
    if build.returncode != 0:
        print(f"FAIL: cannot compile against torch {torch.__version__}'s headers:\n{build.stderr[-3000:]}")
        return 1
    out = subprocess.run([binary], capture_output=True, text=True).stdout
    print(f"torch {torch.__version__}: {out.strip()}")
    fields = out.split()
    slot = int(fields[1])
    offsets = dict(zip(fields[2::2], (int(v) for v in fields[3::2])))
    wanted = {"action": 0, "device": 4, "addr": 8, "stream": 32, "size": 40, "mempool": 48}
    ok = slot == expected and offsets == wanted
    print(f"vtable offset {slot} (tracer assumes {expected}); TraceEntry {offsets} (tracer assumes "
          f"{wanted}) -> {'ok' if ok else 'MISMATCH: update kKnownVersions in torch_allocator.cpp'}")
    return 0 if ok and ops_ok else 1


if __name__ == "__main__":
    sys.exit(main())
