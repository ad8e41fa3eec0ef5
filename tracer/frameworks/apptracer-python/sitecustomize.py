"""apptracer's Python bootstrap: lets the tracer see the blocks framework
allocators carve out of CUDA memory (PyTorch tensors, CuPy arrays), and
which PyTorch module and op each launch came from, without changing the
program, the allocators or the models.

`apptracer record` puts this file's directory first on PYTHONPATH, so Python
imports it at startup as `sitecustomize` (with LD_PRELOAD, set PYTHONPATH
yourself: see docs/tracing.md). It

1. runs the sitecustomize it shadows, if there is one (Ubuntu's, a venv's),
   as Python would have;
2. once torch.cuda has been imported, asks torch to call back when its CUDA
   is initialised (torch.cuda._lazy_call): only then does the caching
   allocator exist, and the tracer attaches its trace tracker to it
   (apptracer_torch_attach in libapptracer.so);
3. once cupy has been imported, enters a cupy.cuda.MemoryHook that reports
   each block to the tracer, in this thread and in every Python thread
   started later (CuPy's hooks are per thread);
4. once torch has been imported, records framework ranges (the
   framework_ranges table): every nn.Module's call through a wrapper of
   nn.Module.__call__ (its dotted path, interned once per module), and torch's ops and
   autograd nodes through RecordFunction callbacks the tracer registers
   (apptracer_torch_ops_attach), and each Python function that calls an
   outermost module as a scope (Python 3.12 and later). A launch in backward
   is attributed offline to the module whose forward created its autograd
   node.

It never imports torch or cupy itself, and does nothing more where the
tracer is not recording (libapptracer.so is not loaded, or says so). Steps
2 and 3 are off with APPTRACER_FRAMEWORK_ALLOCATORS=off; step 4 follows
the tracer's APPTRACER_FRAMEWORK_CONTEXT (sampled unless set: module ranges
and 1 in N ops; modules: no ops; on: every op; off: none). With
APPTRACER_FRAMEWORK_ALLOCATORS=per-buffer it also sets
XLA_PYTHON_CLIENT_ALLOCATOR=platform (each JAX buffer a CUDA allocation),
as `apptracer record` does. It never raises into the program.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.realpath(__file__))
_LIBRARY = os.path.join(os.path.dirname(_HERE), "libapptracer.so")

# sub_allocator values (common/include/apptracer/enums.h) and
# SubAllocationEvent values (records.h) the C entry points take.
_CUPY_POOL = 2
_ALLOC, _FREE = 0, 2


def _run_shadowed_sitecustomize():
    """Runs the next sitecustomize on sys.path, reporting its failure as
    site.py does, so the program sees what it would have seen without us."""
    path = [entry for entry in sys.path if os.path.realpath(entry or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                             "%s: %s\n" % (error.__class__.__name__, error))


_library = None


def _tracer_library():
    """libapptracer.so if this process has it loaded (preloaded, or loaded by
    the CUDA driver through CUDA_INJECTION64_PATH), else None."""
    global _library
    if _library is None:
        import ctypes
        try:
            library = ctypes.PyDLL(None)
            library.apptracer_torch_attach
        except AttributeError:
            try:
                library = ctypes.PyDLL(_LIBRARY, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
            except OSError:
                library = False
        if library:
            library.apptracer_torch_attach.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
            library.apptracer_torch_attach.restype = ctypes.c_int
            library.apptracer_cupy_attach.argtypes = []
            library.apptracer_cupy_attach.restype = ctypes.c_int
            library.apptracer_sub_allocation_event.argtypes = (
                [ctypes.c_int] * 3 + [ctypes.c_uint64] * 4)
            library.apptracer_sub_allocation_event.restype = ctypes.c_int
            library.apptracer_torch_ops_attach.argtypes = [ctypes.c_char_p]
            library.apptracer_torch_ops_attach.restype = ctypes.c_int
            library.apptracer_framework_context.argtypes = []
            library.apptracer_framework_context.restype = ctypes.c_char_p
            library.apptracer_framework_name.argtypes = [ctypes.c_char_p]
            library.apptracer_framework_name.restype = ctypes.c_uint32
        _library = library
    return _library or None


# --- PyTorch -------------------------------------------------------------------

def _attach_torch():
    """Runs when torch's CUDA is initialised; must never raise (torch would
    report it as a failed CUDA initialisation)."""
    try:
        library = _tracer_library()
        if library is None:
            return
        import torch
        backend = torch.cuda.memory.get_allocator_backend()
        library.apptracer_torch_attach(str(torch.__version__).encode(), str(backend).encode())
    except Exception:
        pass


def _torch_cuda_imported(cuda):
    if _tracer_library() is not None:
        cuda._lazy_call(_attach_torch)


# --- PyTorch: which module and op ran --------------------------------------------

# framework_range_kind values (common/include/apptracer/enums.h).
_MODULE_RANGE = 1
_SCOPE_RANGE = 4

# Generators and coroutines leave and re-enter their frames: no scope.
_SUSPENDING = 0x20 | 0x80 | 0x100 | 0x200


def _caller_scopes(library, module_call):
    """Work a program does outside every module (the loss, the hand-offs
    between stages, the call into the optimizer) belongs to the Python
    function that called the outermost module: it is a scope range named
    `training_step (train.py:18)`, or `<module> (train.py:1)` for a script's
    top level, from each of its calls' start to its return. Only those
    functions are watched, through sys.monitoring's events local to their
    code (Python 3.12 and later; none before), and exceptions leaving them
    through the global PY_UNWIND event. Returns the check a module call
    makes with its caller's frame, or None."""
    import threading

    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return None
    tool = None
    for candidate in (4, 3):  # neither a debugger's, coverage's, a profiler's nor the optimizer's
        try:
            monitoring.use_tool_id(candidate, "apptracer")
            tool = candidate
            break
        except ValueError:
            continue
    if tool is None:
        return None
    events = monitoring.events
    push = library.apptracer_framework_push
    pop = library.apptracer_framework_pop
    intern = library.apptracer_framework_name
    seen = set()  # every code that called a module, scoped or not
    scoped = {}  # code -> its scope's name id
    opened = threading.local()  # this thread's open scopes, per code

    def entered(code, offset):
        name = scoped.get(code)
        if name is not None:
            depth = opened.__dict__
            depth[code] = depth.get(code, 0) + 1
            push(_SCOPE_RANGE, name)

    def left(code, offset, value):
        # A frame already running when its code was first scoped, in
        # another thread, closes nothing this thread opened.
        depth = opened.__dict__
        if depth.get(code, 0) > 0:
            depth[code] -= 1
            pop(_SCOPE_RANGE)

    def inside_module(frame):
        while frame is not None:
            if frame.f_code is module_call:
                return True
            frame = frame.f_back
        return False

    def watch(code):
        if not scoped:
            monitoring.register_callback(tool, events.PY_START, entered)
            monitoring.register_callback(tool, events.PY_RETURN, left)
            monitoring.register_callback(tool, events.PY_UNWIND, left)
            monitoring.set_events(tool, events.PY_UNWIND)
        monitoring.set_local_events(tool, code, events.PY_START | events.PY_RETURN)
        where = f"{code.co_qualname} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"
        scoped[code] = intern(where.encode())

    def check(frame):
        code = frame.f_code
        seen.add(code)
        if code.co_flags & _SUSPENDING or inside_module(frame.f_back):
            return
        # Runs inside the program's module call: whatever sys.monitoring
        # refuses leaves the function unscoped, never raises into it.
        try:
            watch(code)
        except Exception:
            return
        # The call running now opens its scope here; its return closes it.
        entered(code, 0)

    return seen, check


def _record_modules(torch, library):
    """Every module call pushes a module range before it runs and pops it
    after (also when it raises): nn.Module.__call__ is wrapped. Global
    forward hooks would do the same, but any global hook sends every module
    call of the program down torch's slow path (bench/RESULTS.md). The first
    time a module no name is known for runs, it and every module under it are
    named: it by its class, the others by their dotted paths below it
    (`layer1.0.conv2`). Only a call made while no module runs looks for the
    function that called it (_caller_scopes): finding a caller's frame costs
    about 250 ns a call on Python 3.12. How many module calls run is one
    count for all threads: another thread's calls can make a call look
    nested (it is looked at on a later call) or outermost (the check walks
    the caller's frames and finds the module around it)."""
    import functools
    import weakref

    # Without argtypes: ctypes converts ints as C ints, several times faster.
    push = library.apptracer_framework_push
    pop = library.apptracer_framework_pop
    intern = library.apptracer_framework_name
    known = {}  # id(module) -> its name's id
    running = [0]  # module calls running, all threads together
    compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)

    def name(module, path):
        if id(module) not in known:
            known[id(module)] = intern(path.encode())
            weakref.finalize(module, known.pop, id(module), None)

    def name_id(module):
        found = known.get(id(module))
        if found is None:
            name(module, type(module).__name__)
            for path, child in module.named_modules():
                if path:
                    name(child, path)
            found = known[id(module)]
        return found

    module_class = torch.nn.Module
    call = module_class.__call__

    known_name = known.get

    # Runs on every module call of the program: the known module's name is
    # looked up inline (a Python call costs about as much as the lookup).
    @functools.wraps(call)
    def recorded_call(module, *args, **kwargs):
        # Under torch.compile the call is traced, not run: nothing to record.
        if compiling():
            return call(module, *args, **kwargs)
        if callers is not None and not running[0]:
            caller = sys._getframe(1)
            if caller.f_code not in callers[0]:
                callers[1](caller)
        found = known_name(id(module))
        push(_MODULE_RANGE, found if found is not None else name_id(module))
        running[0] += 1
        try:
            return call(module, *args, **kwargs)
        finally:
            running[0] -= 1
            pop(_MODULE_RANGE)

    try:
        callers = _caller_scopes(library, recorded_call.__code__)
    except Exception:
        callers = None
    module_class.__call__ = recorded_call


def _torch_imported(torch):
    library = _tracer_library()
    if library is None:
        return
    # The tracer's mode, its default included: declared once, in the tracer.
    context = library.apptracer_framework_context().decode()
    if context == "off":
        return
    if context != "modules":
        library.apptracer_torch_ops_attach(str(torch.__version__).encode())
    _record_modules(torch, library)


# --- CuPy ----------------------------------------------------------------------

def _cupy_imported(cupy):
    library = _tracer_library()
    if library is None or library.apptracer_cupy_attach() != 0:
        return
    from cupy.cuda import memory_hook

    event = library.apptracer_sub_allocation_event

    class ApptracerHook(memory_hook.MemoryHook):
        """Reports each block of CuPy's memory pool: handed out, back in the pool."""
        name = "apptracer"

        def malloc_postprocess(self, **kwargs):
            if kwargs.get("mem_ptr"):
                event(_CUPY_POOL, _ALLOC, kwargs["device_id"], kwargs["mem_ptr"], kwargs["size"],
                      kwargs["mem_size"], 0)

        def free_postprocess(self, **kwargs):
            if kwargs.get("mem_ptr"):
                event(_CUPY_POOL, _FREE, kwargs["device_id"], kwargs["mem_ptr"],
                      kwargs["mem_size"], kwargs["mem_size"], 0)

    hook = ApptracerHook()
    _enter_in_every_thread(hook)


def _enter_in_every_thread(hook):
    """CuPy keeps hooks per thread: enter ours here and in every thread that
    starts from now on (threads already running stay unhooked)."""
    import threading

    def enter():
        try:
            hook.__enter__()
        except Exception:
            pass

    enter()
    original = threading.Thread._bootstrap_inner

    def _bootstrap_inner(thread):
        enter()
        return original(thread)

    threading.Thread._bootstrap_inner = _bootstrap_inner


# --- running code right after a module's own ----------------------------------

class _RunAfter(importlib.abc.Loader):
    """The module's own loader, then `setup(module)`; the module keeps its
    own loader in __loader__ and __spec__."""

    def __init__(self, loader, setup):
        self._loader = loader
        self._setup = setup

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        module.__loader__ = self._loader
        module.__spec__.loader = self._loader
        try:
            self._setup(module)
        except Exception:
            pass

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader the other finders give for the
    modules it watches, once each."""

    def __init__(self, setups):
        self._setups = dict(setups)

    def find_spec(self, name, path, target=None):
        setup = self._setups.get(name)
        if setup is None:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        del self._setups[name]
        spec.loader = _RunAfter(spec.loader, setup)
        return spec


def _install(allocators, context):
    watched = {}
    if allocators:
        watched.update({"torch.cuda": _torch_cuda_imported, "cupy": _cupy_imported})
    if context:
        watched["torch"] = _torch_imported
    # Already imported (by the shadowed sitecustomize, say): set up now.
    for name in list(watched):
        module = sys.modules.get(name)
        if module is not None:
            try:
                watched.pop(name)(module)
            except Exception:
                pass
    sys.meta_path.insert(0, _AfterImport(watched))


_run_shadowed_sitecustomize()
_mode = os.environ.get("APPTRACER_FRAMEWORK_ALLOCATORS", "hooks")
if _mode == "per-buffer":
    # As `apptracer record --framework-allocators=per-buffer` sets it, for
    # programs traced through LD_PRELOAD or CUDA_INJECTION64_PATH: XLA reads
    # it when its GPU backend starts, long after this runs.
    os.environ["XLA_PYTHON_CLIENT_ALLOCATOR"] = "platform"
# Unless turned off here, torch's import asks the tracer which framework
# context it records (its default is not repeated here).
_context = os.environ.get("APPTRACER_FRAMEWORK_CONTEXT")
if _mode != "off" or _context != "off":
    _install(_mode != "off", _context != "off")
