#!/usr/bin/env python3
"""The Python bootstrap (tracer/frameworks/apptracer-python/sitecustomize.py)
without torch, CuPy or a GPU: fake torch and cupy packages stand in for the
real ones, a fake library for libapptracer.so, and the real library (not
recording here) answers through the exported C functions.

    python_bootstrap_test.py BOOTSTRAP_DIR LIBAPPTRACER
"""
import os
import subprocess
import sys
import tempfile
import textwrap

FAKE_TORCH = {
    "torch/__init__.py": """
        __version__ = "2.11.0+cu130"
        from torch import cuda, nn
    """,
    "torch/cuda/__init__.py": """
        from torch.cuda import memory
        _queued = []
        def _lazy_call(callable):
            _queued.append(callable)
        def _lazy_init():
            for callable in _queued:
                callable()
    """,
    "torch/nn/__init__.py": """
        class Module:
            def __call__(self, *args):
                return self.forward(*args)
            def forward(self, x):
                return x
            def named_modules(self):
                yield "", self
                for name, child in vars(self).items():
                    if isinstance(child, Module):
                        yield name, child
    """,
    "torch/cuda/memory.py": """
        def get_allocator_backend():
            return "native"
    """,
}

# CuPy's hooks are per thread, called with keyword arguments.
FAKE_CUPY = {
    "cupy/__init__.py": "from cupy import cuda\n",
    "cupy/cuda/__init__.py": "",
    "cupy/cuda/memory_hook.py": """
        import threading
        _local = threading.local()
        class MemoryHook:
            name = None
            def __enter__(self):
                hooks = _local.__dict__.setdefault("hooks", {})
                if self.name in hooks:
                    raise RuntimeError("hook already exists")
                hooks[self.name] = self
                return self
        def pool_malloc(size, ptr):
            for hook in getattr(_local, "hooks", {}).values():
                hook.malloc_postprocess(device_id=0, size=size, mem_size=512, mem_ptr=ptr, pmem_id=1)
        def pool_free(ptr):
            for hook in getattr(_local, "hooks", {}).values():
                hook.free_postprocess(device_id=0, mem_size=512, mem_ptr=ptr, pmem_id=1)
    """,
}

# A stand-in for libapptracer.so, recording what the bootstrap asks of it.
FAKE_LIBRARY = """
import sitecustomize as boot
calls = []
class Library:
    def apptracer_torch_attach(self, version, backend):
        calls.append(("torch", version, backend))
        return 0
    def apptracer_cupy_attach(self):
        calls.append(("cupy",))
        return 0
    def apptracer_sub_allocation_event(self, *args):
        calls.append(args)
        return 0
    def apptracer_framework_context(self):
        return b"modules"
    def apptracer_framework_name(self, name):
        names[len(names) + 1] = name.decode()
        return len(names)
    def apptracer_framework_push(self, kind, name_id):
        calls.append(("push", kind, names[name_id].split(" ")[0]))
        return 0
    def apptracer_framework_pop(self, kind):
        calls.append(("pop", kind))
        return 0
names = {}
boot._library = Library()
"""


def write_tree(root, files):
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))


def python(code, pythonpath, **env):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath), **env)
    for inherited in ("LD_PRELOAD", "APPTRACER_FRAMEWORK_ALLOCATORS", "XLA_PYTHON_CLIENT_ALLOCATOR"):
        environment.pop(inherited, None)
    for key, value in env.items():
        environment[key] = value
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=environment, timeout=60)


def check_bootstrap(bootstrap, library, work):
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    fakes = os.path.join(work, "fakes")
    write_tree(fakes, {**FAKE_TORCH, **FAKE_CUPY})
    other = os.path.join(work, "other")
    write_tree(other, {"sitecustomize.py": 'print("other sitecustomize ran")\n'})
    failing = os.path.join(work, "failing")
    write_tree(failing, {"sitecustomize.py": 'raise ValueError("boom")\n'})

    # 1. The sitecustomize ours shadows runs, once; ours is the one imported.
    run = python("import sitecustomize; print(sitecustomize.__file__)", [bootstrap, other])
    lines = run.stdout.splitlines()
    expect(run.returncode == 0 and lines[:1] == ["other sitecustomize ran"] and len(lines) == 2 and
           lines[1].startswith(os.path.realpath(bootstrap)),
           f"chains to the shadowed sitecustomize: {run.stdout!r} {run.stderr!r}")
    # A failing one fails as it would without us: one message, the program runs.
    ours = python("print('program ran')", [bootstrap, failing])
    theirs = python("print('program ran')", [failing])
    expect((ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr),
           f"a failing sitecustomize: ours {ours.stderr!r}, without us {theirs.stderr!r}")
    run = python("print('program ran')", [bootstrap])
    expect(run.returncode == 0 and run.stdout == "program ran\n" and run.stderr == "",
           f"nothing to chain to: {run.stdout!r} {run.stderr!r}")

    # 2. torch: attached once torch's CUDA initialises, not at import; torch.cuda
    # keeps its own loader.
    torch_script = FAKE_LIBRARY + """
import torch
before = list(calls)
torch.cuda._lazy_init()
print(before, calls)
print(type(torch.cuda.__loader__).__name__, type(torch.cuda.__spec__.loader).__name__)
"""
    run = python(torch_script, [bootstrap, fakes, other])
    expect(run.returncode == 0, f"torch script: {run.stderr!r}")
    lines = run.stdout.splitlines()
    expect(lines[1:2] == ["[] [('torch', b'2.11.0+cu130', b'native')]"],
           f"attaches after CUDA initialisation: {run.stdout!r}")
    expect(lines[2:3] == ["SourceFileLoader SourceFileLoader"], f"torch.cuda's loader: {run.stdout!r}")
    run = python(torch_script, [bootstrap, fakes, other], APPTRACER_FRAMEWORK_ALLOCATORS="off")
    expect(run.stdout.splitlines()[1:2] == ["[] []"] and
           run.stdout.startswith("other sitecustomize ran"),
           f"off: no hook, still chained: {run.stdout!r} {run.stderr!r}")

    # per-buffer: XLA allocates each buffer through CUDA, as `record` sets it.
    allocator = "import os; print(os.environ.get('XLA_PYTHON_CLIENT_ALLOCATOR'))"
    for mode, expected in (("per-buffer", "platform"), ("hooks", "None"), ("off", "None")):
        run = python(allocator, [bootstrap], APPTRACER_FRAMEWORK_ALLOCATORS=mode)
        expect(run.stdout.strip() == expected,
               f"{mode}: XLA_PYTHON_CLIENT_ALLOCATOR {run.stdout!r} {run.stderr!r}")

    # 3. CuPy: the hook reports every block, in threads started later too.
    run = python(FAKE_LIBRARY + """
import threading
import cupy
from cupy.cuda import memory_hook
memory_hook.pool_malloc(100, 0x1000)
def work():
    memory_hook.pool_malloc(200, 0x2000)
    memory_hook.pool_free(0x2000)
thread = threading.Thread(target=work)
thread.start()
thread.join()
print(calls)
""", [bootstrap, fakes])
    expect(run.stdout.strip() == "[('cupy',), (2, 0, 0, 4096, 100, 512, 0), (2, 0, 0, 8192, 200, 512, 0), "
                                 "(2, 2, 0, 8192, 512, 512, 0)]",
           f"CuPy blocks in every thread: {run.stdout!r} {run.stderr!r}")

    # 4. PyTorch modules: each call a module range; from Python 3.12 on, the
    # function that called the outermost module is a scope over each of its
    # calls (the loss it computes is its), closed by a return or an
    # exception, and a module's forward calling another is no scope.
    modules_script = FAKE_LIBRARY + """
import torch
class Net(torch.nn.Module):
    def __init__(self):
        self.inner = torch.nn.Module()
    def forward(self, x):
        return self.inner(x) + 1
net = Net()
def training_step(x):
    return net(x) * 2
def failing_step(x):
    net(x)
    raise ValueError(x)
for i in range(3):
    training_step(i)
try:
    failing_step(0)
except ValueError:
    pass
print([c for c in calls if c[0] in ("push", "pop")])
print(sorted(set(names.values())))
"""
    run = python(modules_script, [bootstrap, fakes])
    lines = run.stdout.splitlines()
    line_of = {name: modules_script.splitlines().index(f"def {name}(x):") + 1
               for name in ("training_step", "failing_step")}
    scoped = sys.version_info >= (3, 12)
    step = [("push", 4, "training_step")] if scoped else []
    module_calls = [("push", 1, "Net"), ("push", 1, "inner"), ("pop", 1), ("pop", 1)]
    closed = [("pop", 4)] if scoped else []
    failing = [("push", 4, "failing_step")] if scoped else []
    expected = (step + module_calls + closed) * 3 + failing + module_calls + closed
    expect(lines[:1] == [repr(expected)], f"module ranges and caller scopes: {run.stdout!r} {run.stderr!r}")
    scopes = [f"{name} (<string>:{line})" for name, line in sorted(line_of.items())] if scoped else []
    expect(lines[1:2] == [repr(sorted(["Net", "inner"] + scopes))],
           f"scope names: {run.stdout!r}")

    # 5. The real library: found where it is loaded, not loaded where it is not.
    run = python("import sitecustomize as b; print(b._tracer_library())", [bootstrap])
    expect(run.stdout.strip() == "None", f"no library loaded: {run.stdout!r} {run.stderr!r}")
    run = python("""
        import sitecustomize as b
        lib = b._tracer_library()
        print(lib.apptracer_cupy_attach(), lib.apptracer_torch_attach(b"2.11.0", b"native"),
              lib.apptracer_sub_allocation_event(2, 0, 0, 1 << 47, 100, 512, 0),
              lib.apptracer_sub_allocation_event(9, 0, 0, 0, 0, 0, 0),
              lib.apptracer_sub_allocation_event(2, 99, 0, 0, 0, 0, 0))
    """, [bootstrap], LD_PRELOAD=library)
    # Recording (a GPU machine): no torch here; events are taken. Else: nothing is.
    expect(run.stdout.split() in (["1", "1", "1", "2", "2"], ["0", "3", "0", "2", "2"]),
           f"the exported functions through ctypes: {run.stdout!r} {run.stderr!r}")

    for failure in failures:
        print("FAIL", failure)
    print("python bootstrap: ok" if not failures else "python bootstrap: FAILED")
    return 1 if failures else 0


def main():
    with tempfile.TemporaryDirectory(prefix="apptracer-bootstrap-") as work:
        return check_bootstrap(sys.argv[1], sys.argv[2], work)


if __name__ == "__main__":
    sys.exit(main())
