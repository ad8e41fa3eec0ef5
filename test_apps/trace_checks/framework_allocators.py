"""Framework allocators (pytorch_train_step.py, cupy_pool.py, jax_arrays.py):
tensors as values. Frameworks carve tensors out of large CUDA allocations;
taken whole, a segment would be one value written by every kernel. Each app
prints the addresses of its tensors or arrays; the trace must hold them as
sub-allocations of PyTorch's caching allocator or CuPy's pool (each its own
block, a freed block reused by the next), or, for JAX, as CUDA allocations
of their own; and the DVDG must follow each through the step: a weight's
new version from its gradient, a result on the host from the copies and
kernels that made it, and never more versions of a tensor than operations
that may write it.
"""
import contextlib
import json
import sqlite3
import subprocess

from . import base
from .base import E, Case, MiB


def printed_facts(c, stdout, prefix):
    """The JSON object a Python test app printed after `prefix`; None, a
    failure said, where it printed none."""
    for line in stdout.splitlines():
        if line.startswith(prefix) and line[len(prefix):].lstrip().startswith("{"):
            return json.loads(line[len(prefix):])
    c.expect(False, f"the app printed its addresses: {stdout!r}")
    return None


def build_dvdg(c, t):
    """Stores the trace's DVDG in it; a read-write connection to query it,
    closed when the `with` block that holds it ends."""
    result = subprocess.run([base.APPTRACER, "dvdg", t.path], capture_output=True, text=True)
    c.equal(result.returncode, 0, f"apptracer dvdg: {result.stderr.strip()}")
    return contextlib.closing(sqlite3.connect(t.path))


def ancestor_ops(db, value_id):
    """Every op that produced a value `value_id` depends on, transitively."""
    return {op for (op,) in db.execute(
        "WITH RECURSIVE up(id) AS (SELECT ? UNION SELECT e.src_value_id FROM dvdg_edges e "
        "JOIN up ON e.dst_value_id = up.id) "
        "SELECT v.producer_op_id FROM up JOIN dvdg_values v ON v.id = up.id "
        "WHERE v.producer_op_id IS NOT NULL", (value_id,))}


def copy_op(db, where, *args):
    """The dvdg op of the one copy matching `where` (SQL over memcpys m)."""
    rows = db.execute(f"SELECT o.id FROM dvdg_ops o JOIN memcpys m ON m.id = o.source_id "
                      f"WHERE o.kind = 'copy' AND {where}", args).fetchall()
    return rows[0][0] if len(rows) == 1 else None


def written_values(db, op):
    return [v for (v,) in db.execute("SELECT id FROM dvdg_values WHERE producer_op_id = ?", (op,))]


def check_versions_bounded_by_writes(c, t, db, allocator):
    """No tensor's value has more versions than operations that (may) write
    it: a kernel argument pointing into it (not a known read), a copy or
    memset into it, issued while it was allocated. (Whole segments as values
    had a version per write to any tensor in them.)"""
    rows = db.execute(
        "SELECT s.id, (SELECT max(version) FROM dvdg_values v WHERE v.sub_allocation_id = s.id), "
        "(SELECT count(DISTINCT k.id) FROM kernels k JOIN kernel_args a ON a.kernel_id = k.id "
        " WHERE a.raw_value >= s.address AND a.raw_value < s.address + s.bytes AND a.access != ? "
        " AND coalesce(k.api_start_ns, k.gpu_start_ns) >= s.alloc_ns "
        " AND (s.free_ns IS NULL OR coalesce(k.api_start_ns, k.gpu_start_ns) < s.free_ns)) + "
        "(SELECT count(*) FROM memcpys m WHERE m.dst_address < s.address + s.bytes "
        " AND m.dst_address + m.bytes > s.address AND m.api_start_ns >= s.alloc_ns "
        " AND (s.free_ns IS NULL OR m.api_start_ns < s.free_ns)) + "
        "(SELECT count(*) FROM memsets m WHERE m.address < s.address + s.bytes "
        " AND m.address + m.bytes > s.address AND m.api_start_ns >= s.alloc_ns "
        " AND (s.free_ns IS NULL OR m.api_start_ns < s.free_ns)) "
        "FROM sub_allocations s WHERE s.allocator = ?", (E.ACCESS_R, allocator)).fetchall()
    c.expect(len(rows) > 0, "sub-allocations recorded")
    over = [(block, versions, writes) for block, versions, writes in rows
            if versions is not None and versions > writes]
    c.equal(over, [], "tensors with more versions than writes (block, versions, writes)")


def check_pytorch_train_step(c, t, stdout):
    facts = printed_facts(c, stdout, "pytorch_train_step: ")
    if facts is None:
        return
    c.expect((t.meta("sub_allocations.pytorch") or "").startswith("attached"),
             f"the tracker attached: {t.meta('sub_allocations.pytorch')!r}")
    blocks = {}
    for name, address in facts["params"].items():
        rows = t.rows("SELECT id, bytes, parent_alloc_id IS NOT NULL, device FROM sub_allocations "
                      "WHERE address = ? AND allocator = ?", address, E.PYTORCH_CACHING)
        c.equal([r[1:] for r in rows], [(facts["param_bytes"][name], 1, 0)],
                f"parameter {name}: one block of its bytes in a CUDA allocation")
        blocks[name] = rows[0][0] if rows else None
    c.equal(len(set(blocks.values())), len(blocks), "each parameter its own block")
    with build_dvdg(c, t) as db:
        for name, block in blocks.items():
            values = db.execute("SELECT count(*) FROM dvdg_values WHERE sub_allocation_id = ?",
                                (block,)).fetchone()[0]
            c.expect(values >= 2, f"parameter {name} has values of its own: {values}")
        # The optimizer's update of a weight: its last version, from the
        # previous one and the gradient.
        weight = "0.weight"
        last = db.execute("SELECT id, version, producer_op_id FROM dvdg_values "
                          "WHERE sub_allocation_id = ? ORDER BY version DESC LIMIT 1",
                          (blocks.get(weight),)).fetchone()
        if last is None:
            c.expect(False, f"{weight} has no value")
        else:
            value, version, op = last
            sources = db.execute(
                "SELECT v.sub_allocation_id, v.version, s.address, e.kind FROM dvdg_edges e "
                "JOIN dvdg_values v ON v.id = e.src_value_id "
                "LEFT JOIN sub_allocations s ON s.id = v.sub_allocation_id "
                "WHERE e.dst_value_id = ?", (value,)).fetchall()
            c.equal(db.execute("SELECT kind FROM dvdg_ops WHERE id = ?", (op,)).fetchone(), ("kernel",),
                    f"{weight}'s last version is a kernel's (the optimizer step)")
            c.expect(any(b == blocks[weight] and v == version - 1 for b, v, _, _ in sources),
                     f"{weight} v{version} comes from v{version - 1}: {sources}")
            c.expect(any(a == facts["grads"][weight] for _, _, a, _ in sources),
                     f"{weight} v{version} comes from its gradient's block: {sources}")
        # The loss on the host depends on the batch's host-to-device copy.
        batch = copy_op(db, "m.kind = ? AND m.dst_address = ? AND m.bytes = ?", E.HTOD, facts["input"],
                        facts["input_bytes"])
        loss = copy_op(db, "m.kind = ? AND m.src_address = ?", E.DTOH, facts["loss"])
        c.expect(batch is not None and loss is not None, f"the batch copy {batch} and loss copy {loss}")
        if batch is not None and loss is not None:
            written = written_values(db, loss)
            c.equal(len(written), 1, "the loss copy writes one value")
            c.expect(written and batch in ancestor_ops(db, written[0]),
                     "the loss on the host depends on the batch's host-to-device copy")
        check_versions_bounded_by_writes(c, t, db, E.PYTORCH_CACHING)


def check_cupy_pool(c, t, stdout):
    facts = printed_facts(c, stdout, "cupy_pool: ")
    if facts is None:
        return
    c.expect(t.meta("sub_allocations.cupy") is not None, "the CuPy hook was entered")
    rows = {name: t.rows("SELECT id, bytes, block_bytes, alloc_ns, free_ns, alloc_tid, "
                         "parent_alloc_id IS NOT NULL FROM sub_allocations "
                         "WHERE address = ? AND allocator = ? ORDER BY alloc_ns", address, E.CUPY_POOL)
            for name, address in facts.items()}
    c.equal(facts["a"], facts["c"], "c reuses a's block")
    a_then_c = rows["a"]
    c.equal(len(a_then_c), 2, "a's block twice: a, then c")
    if len(a_then_c) == 2:
        (a_id, a_bytes, a_block, _, a_free, a_tid, a_parent), (c_id, _, _, c_alloc, _, _, _) = a_then_c
        c.equal((a_bytes, a_block, a_parent), (4 * MiB, 4 * MiB, 1), "a: 4 MiB in a CUDA allocation")
        c.expect(a_free is not None and a_free <= c_alloc, "a is back in the pool before c takes it")
        d = rows["d"]
        c.equal([(r[1], r[2]) for r in d], [(4000, 4096)], "d: 4000 bytes asked, a 4096-byte block")
        c.expect(d and d[0][5] != a_tid, "d was allocated on its own thread, and seen there")
        with build_dvdg(c, t) as db:
            from_a = db.execute(
                "SELECT count(*) FROM dvdg_edges e JOIN dvdg_values s ON s.id = e.src_value_id "
                "JOIN dvdg_values d ON d.id = e.dst_value_id "
                "WHERE s.sub_allocation_id = ? AND d.sub_allocation_id = ?", (a_id, c_id)).fetchone()[0]
            c.equal(from_a, 0, "c, in a's old block, depends on nothing of a")
            b_id = rows["b"][0][0] if rows["b"] else None
            c.expect(db.execute("SELECT count(*) FROM dvdg_values WHERE sub_allocation_id = ?",
                                (b_id,)).fetchone()[0] >= 2, "b has values of its own")
            check_versions_bounded_by_writes(c, t, db, E.CUPY_POOL)


def check_jax_arrays(c, t, stdout):
    facts = printed_facts(c, stdout, "jax_arrays: ")
    if facts is None:
        return
    c.equal(t.one("SELECT count(*) FROM sub_allocations"), 0, "no sub-allocations: XLA's platform allocator")
    allocations = {}
    for name, address in facts.items():
        # The latest at that address: an earlier buffer may have been freed there.
        # XLA's platform allocator maps each buffer through the VMM API
        # (cuMemCreate + cuMemMap): the mapping is what the pointer hits.
        allocations[name] = t.one("SELECT id FROM allocations WHERE address = ? AND kind IN (?, ?) "
                                  "ORDER BY alloc_ns DESC LIMIT 1", address, E.DEVICE, E.VMM_MAPPING)
        c.expect(allocations[name] is not None, f"array {name} is a CUDA allocation of its own")
    c.equal(len(set(allocations.values())), 3, "three arrays, three allocations")
    with build_dvdg(c, t) as db:
        z_copy = copy_op(db, "m.kind = ? AND m.src_alloc_id = ?", E.DTOH, allocations["z"])
        c.expect(z_copy is not None, "z's copy to the host")
        if z_copy is not None:
            written = written_values(db, z_copy)
            ancestors = ancestor_ops(db, written[0]) if written else set()
            producers = {name: {op for (op,) in db.execute(
                "SELECT producer_op_id FROM dvdg_values WHERE alloc_id = ? AND version > 0", (alloc,))}
                for name, alloc in allocations.items()}
            for name in ("x", "y", "z"):
                c.expect(producers[name] & ancestors, f"z on the host depends on {name}'s own value")


CASES = {
    # Python programs (exit 77 without their framework or a GPU).
    "pytorch_train_step": Case(check_pytorch_train_step, "pytorch_train_step.py",
                               timing_lines="pytorch_train_step: "),
    "cupy_pool": Case(check_cupy_pool, "cupy_pool.py", timing_lines="cupy_pool: "),
    "jax_arrays": Case(check_jax_arrays, "jax_arrays.py", timing_lines="jax_arrays: ",
                       record_args=["--framework-allocators", "per-buffer"]),
}
