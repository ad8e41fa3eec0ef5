"""CUDA graphs (graphs.cu): a four-node graph (copy in, memset, kernel, copy
out) made explicitly, by stream capture, or updated between launches. Work a
graph runs must be analysed like work run eagerly: each launch's nodes
become rows resolved to their buffers and naming the exec's node, and the
DVDG is that of the same work run eagerly (a twin traced beside it).
"""
import glob
import os
import tempfile

from . import base
from .analyses import dvdg_edges
from .base import E, Case, MiB, Trace, run, traced_command

GRAPH_LAUNCHES = 100


def graph_buffers(c, t):
    """x, y, z (4 MiB device) and in, out (pinned host), in allocation order."""
    device = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = ? "
                                   "ORDER BY id", E.DEVICE, 4 * MiB)]
    pinned = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = ? "
                                   "ORDER BY id", E.PINNED_HOST, 4 * MiB)]
    c.equal((len(device), len(pinned)), (3, 2), "x, y, z on the device, in and out pinned")
    return (device + pinned) if len(device) == 3 and len(pinned) == 2 else [None] * 5


def axpy_kernels(t):
    return t.rows("SELECT k.id, k.launch_kind, k.api_start_ns IS NOT NULL FROM kernels k "
                  "JOIN strings d ON d.id = k.demangled_id WHERE d.text LIKE 'axpy(%' "
                  "ORDER BY k.gpu_start_ns")


def pointer_args(t, kernel_id):
    return t.rows("SELECT param_index, alloc_id, access FROM kernel_args WHERE kernel_id = ? "
                  "AND alloc_id IS NOT NULL ORDER BY offset", kernel_id)


def check_graph_work(c, t, launches, inputs):
    """`launches` launches of the four-node graph; the kernel of each read inputs[i]."""
    x, y, z, host_in, host_out = graph_buffers(c, t)
    kernels = axpy_kernels(t)
    c.equal(len(kernels), launches, "one axpy row per graph launch")
    c.equal({(kind, has_start) for _, kind, has_start in kernels}, {(E.LAUNCH_GRAPH, 1)},
            "each ran by a graph launch, with the launch's call time")
    buffers = {"x": x, "z": z}
    resolved = [pointer_args(t, k) == [(0, y, E.ACCESS_RW), (1, buffers[i], E.ACCESS_R)]
                for (k, _, _), i in zip(kernels, inputs)]
    c.equal(sum(resolved), launches, "each graph-run axpy's pointers resolve to y (rw) and its input")
    copies = t.rows("SELECT src_alloc_id, dst_alloc_id, count(*) FROM memcpys "
                    "WHERE graph_node_id IS NOT NULL GROUP BY 1, 2 ORDER BY 3, 1")
    c.equal(sorted(copies), sorted([(host_in, x, launches), (y, host_out, launches)]),
            "the graph's copies resolve: in -> x, y -> out")
    c.equal(t.rows("SELECT alloc_id, count(*) FROM memsets WHERE graph_node_id IS NOT NULL "
                   "GROUP BY 1"), [(y, launches)], "the graph's memsets resolve to y")
    # The H100 (CUDA 13.0) adds one kernel node of its own to the exec at
    # instantiation, with no template, that runs nothing: allowed, if idle.
    c.equal(t.rows("SELECT template_node_id IS NOT NULL, count(*) FROM graph_nodes "
                   "WHERE template_node_id IS NOT NULL OR graph_id NOT IN "
                   "(SELECT graph_id FROM graph_nodes WHERE template_node_id IS NOT NULL) "
                   "GROUP BY 1"),
            [(0, 4), (1, 4)], "four nodes made, and the exec's copy of each")
    c.equal(t.one("SELECT count(*) FROM graph_nodes g WHERE template_node_id IS NULL AND graph_id IN "
                  "(SELECT graph_id FROM graph_nodes WHERE template_node_id IS NOT NULL) AND "
                  "(EXISTS (SELECT 1 FROM kernels k WHERE k.graph_node_id = g.node_id) OR "
                  " EXISTS (SELECT 1 FROM memcpys m WHERE m.graph_node_id = g.node_id) OR "
                  " EXISTS (SELECT 1 FROM memsets m WHERE m.graph_node_id = g.node_id))"), 0,
            "nodes the driver added to the exec ran no work")
    c.equal(t.one("SELECT count(*) FROM kernels k JOIN graph_nodes g ON g.node_id = k.graph_node_id "
                  "WHERE g.template_node_id IS NOT NULL"), launches,
            "a graph-run kernel names the exec's node")


def traced_twin(app, app_args):
    """Traces another run of an app, the twin the case compares with; None if it failed."""
    out = tempfile.mkdtemp(prefix=f"apptracer-{app}-twin-")
    program = os.path.join(os.path.abspath(base.ARGS.apps), app)
    command, env = traced_command(Case(None, app, app_args), base.ARGS, program,
                                  os.path.join(out, "twin-%p.db"))
    status = run(command, env)[0]
    paths = glob.glob(os.path.join(out, "twin-*.db"))
    return Trace(paths[0]) if status == 0 and len(paths) == 1 else None


def dvdg_by_allocation_order(t):
    """dvdg_edges with allocations named by their rank in allocation order."""
    rank = {i: r for r, (i,) in enumerate(t.rows("SELECT id FROM allocations ORDER BY alloc_ns, id"))}
    return [(rank.get(s), sv, rank.get(d), dv, kind) for s, sv, d, dv, kind in dvdg_edges(t)]


def check_graph_twin(c, t):
    eager = traced_twin("graphs", ["eager"])
    if eager is None:
        c.expect(False, "the eager twin (graphs eager) left no trace")
        return
    c.equal(dvdg_by_allocation_order(t), dvdg_by_allocation_order(eager),
            "the DVDG is that of the same work run eagerly")


def check_graphs_explicit(c, t):
    check_graph_work(c, t, GRAPH_LAUNCHES, ["x"] * GRAPH_LAUNCHES)
    c.equal(t.one("SELECT count(*) FROM graph_nodes WHERE captured = 1"), 0, "none captured")
    check_graph_twin(c, t)


def check_graphs_capture(c, t):
    check_graph_work(c, t, GRAPH_LAUNCHES, ["x"] * GRAPH_LAUNCHES)
    c.equal(t.one("SELECT count(*) FROM graph_nodes WHERE captured = 1 AND "
                  "call_correlation_id IS NOT NULL"), 4, "the four captured calls made the nodes")
    c.equal(t.api_count("cudaLaunchKernel"), 1, "the captured launch is still an API call")
    c.equal(t.one("SELECT count(*) FROM kernels WHERE launch_kind != ?", E.LAUNCH_GRAPH), 0,
            "the captured launch ran nothing: no kernel row of its own")
    c.equal(t.one("SELECT count(*) FROM memcpys WHERE graph_node_id IS NULL"), 0,
            "the captured copies ran nothing")
    c.equal(t.one("SELECT count(*) FROM memsets WHERE graph_node_id IS NULL"), 1,
            "only z's eager memset: the captured one ran nothing")
    check_graph_twin(c, t)


def check_graphs_update(c, t):
    # cudaGraphExecKernelNodeSetParams between the launches: the second reads z.
    check_graph_work(c, t, 2, ["x", "z"])


CASES = {
    "graphs_explicit": Case(check_graphs_explicit, "graphs", ["explicit"]),
    "graphs_capture": Case(check_graphs_capture, "graphs", ["capture"]),
    "graphs_update": Case(check_graphs_update, "graphs", ["update"]),
}
