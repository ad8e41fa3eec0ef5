"""Kernel arguments and `apptracer record --exact`: which allocations a
kernel's pointer arguments resolve to and the access their signature
implies; under --exact, the byte ranges each launch read and wrote (to the
32-byte granule, in the app's kernels, cuBLAS's, cuDNN's, and Hopper's bulk
and TMA copies) and what the sanitizer could not see. The DVDG's edges come
from these accesses: a correct program's must show no uninitialized read.
"""
import csv
import subprocess

from . import base
from .analyses import diagnose_findings, dvdg_json, uninitialized_reads
from .base import E, Case, MiB


def check_kernel_args(c, t, stdout):
    device = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = ? "
                                   "ORDER BY id", E.DEVICE, 4 * MiB)]
    if len(device) != 3:
        c.expect(False, f"expected x, y and a freed buffer, got {device}")
        return
    x, y, gone = device
    managed = t.one("SELECT id FROM allocations WHERE kind = ?", E.MANAGED)
    mapped = t.one("SELECT id FROM allocations WHERE kind = ?", E.MAPPED)
    ours = t.rows("SELECT k.id, d.text FROM kernels k JOIN strings d ON d.id = k.demangled_id "
                  "WHERE d.text NOT LIKE '%gemm%' AND d.text NOT LIKE '%cutlass%' "
                  "ORDER BY k.api_start_ns")

    def args(kernel_id):
        return t.rows("SELECT param_index, offset, alloc_id, alloc_offset, access, access_source "
                      "FROM kernel_args WHERE kernel_id = ? ORDER BY offset", kernel_id)

    rw, r = (E.ACCESS_RW, E.SOURCE_ASSUMED), (E.ACCESS_R, E.SOURCE_CONST)
    expected = [
        ("axpy(float*, float const*, float, int)", [(0, 0, y, 0) + rw, (1, 8, x, 0) + r]),
        ("axpy(float*, float const*, float, int)", [(0, 0, y, 4096) + rw, (1, 8, x, 0) + r]),
        ("copy_pair(Pair, int)", [(0, 0, y, 0) + rw, (0, 8, x, 0) + rw]),
        ("axpy(float*, float const*, float, int)", [(0, 0, managed, 0) + rw, (1, 8, mapped, 0) + r]),
        # The cookie looks like an address but points into nothing live: no row.
        ("scale_c", [(0, 0, y, 0) + rw]),
    ]
    c.equal([name for _, name in ours], [name for name, _ in expected], "our kernels, in order")
    for (kernel_id, name), (_, rows) in zip(ours, expected):
        c.equal(args(kernel_id), rows, f"arguments of {name} (kernel {kernel_id})")
    c.equal(t.one("SELECT count(*) FROM kernel_args WHERE alloc_id = ?", gone), 0,
            "nothing resolves to freed memory")
    if "no cuBLAS here" in stdout:
        print("note: cuBLAS absent, SGEMM arguments not checked")
        return
    gemm_ids = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = ? "
                                     "ORDER BY id", E.DEVICE, 256 * 256 * 4)][:3]
    resolved = t.rows("SELECT k.id, group_concat(DISTINCT a.alloc_id) FROM kernels k "
                      "JOIN kernel_args a ON a.kernel_id = k.id WHERE k.id NOT IN (%s) "
                      "GROUP BY k.id" % ",".join(str(i) for i, _ in ours))
    c.expect(any(set(gemm_ids) <= {int(v) for v in ids.split(",")} for _, ids in resolved if ids),
             f"a cuBLAS kernel's arguments resolve to A, B and C {gemm_ids}: {resolved}")


def check_exact_sgemm(c, t, kernels, accesses):
    """cuBLAS's own kernels under --exact: A and B read whole and never written,
    C written whole and (beta 0) never read; across however many kernels
    cuBLAS chose, and whatever workspace of its own it touched."""
    gemm = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = 40000 "
                                 "ORDER BY id", E.DEVICE)]
    if not gemm:
        print("note: cuBLAS absent, SGEMM under --exact not checked")
        return
    c.equal(len(gemm), 3, "three 40,000-byte matrices for the SGEMM")
    c.expect(kernels, "cuBLAS launched kernels of its own")
    spans = {(a, access): [] for a in gemm for access in (E.ACCESS_R, E.ACCESS_W, E.ACCESS_RW)}
    for kernel_id, _ in kernels:
        for a, lo, hi, access, _ in accesses(kernel_id):
            if a in gemm:
                spans[(a, access)].append((lo, hi))

    def covered(pieces):
        """The union of [lo, hi) pieces, merged."""
        merged = []
        for lo, hi in sorted(pieces):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        return merged
    for role, a in (("A", gemm[0]), ("B", gemm[1])):
        c.equal(covered(spans[(a, E.ACCESS_R)]), [(0, 40000)], f"SGEMM's {role} read whole")
        c.equal(spans[(a, E.ACCESS_W)] + spans[(a, E.ACCESS_RW)], [], f"SGEMM's {role} never written")
    c.equal(covered(spans[(gemm[2], E.ACCESS_W)]), [(0, 40000)], "SGEMM's C written whole")
    c.equal(spans[(gemm[2], E.ACCESS_R)] + spans[(gemm[2], E.ACCESS_RW)], [], "SGEMM's C never read (beta 0)")


def check_exact_patterns(c, t):
    """--exact: every kernel's ranges, to the 32-byte granule, per buffer (found by size)."""
    c.equal(t.meta("exact"), "on", "meta.exact")
    print(f"note: --exact path: {t.meta('exact_path')}")
    buffer = {}
    for k in range(12):
        size = 4096 if k == 10 else 4096 * (k + 2)
        row = t.rows("SELECT id, address FROM allocations WHERE kind = ? AND bytes = ?", E.DEVICE, size)
        if len(row) != 1:
            c.expect(False, f"buffer {k} ({size} bytes): expected one allocation, got {row}")
            return
        buffer[row[0][0]] = k
    c.equal(t.one("SELECT count(*) FROM exact_launches WHERE kernel_id IS NULL"), 0,
            "every --exact launch joined its kernels row")
    R, W, RW = E.ACCESS_R, E.ACCESS_W, E.ACCESS_RW
    expected = {
        "partial_write(float*)": [(0, 0, 4096, W)],
        "strided_read(float const*, float*)":
            [(1, 64 * i, 64 * i + 32, R) for i in range(64)] + [(2, 0, 256, W)],
        "only_read(float*, float*)": [(3, 0, 4096, R), (4, 0, 4096, W)],
        "in_place(float*)": [(5, 0, 4096, RW)],
        "write_then_read(float*, float*)": [(6, 0, 4096, W), (7, 0, 4096, W)],
        "histogram(int const*, int*)": [(8, 0, 4096, R), (9, 0, 32, RW)],
    }
    kernels = t.rows("SELECT k.id, d.text FROM kernels k JOIN strings d ON d.id = k.demangled_id "
                     "ORDER BY k.api_start_ns")
    ours_last = "read_past(float const*, float*)"
    cublas = [(k, name) for k, name in kernels if name not in expected and name != ours_last]
    kernels = [(k, name) for k, name in kernels if (k, name) not in cublas]
    c.equal(len(kernels), 7, "seven kernels of the app's own")
    inexact = t.rows("SELECT e.kernel_id, e.approximate, v.name FROM exact_launches e "
                     "JOIN enum_values v ON v.enum = 'exact_gap' AND v.value = e.incomplete "
                     "WHERE e.approximate != 0 OR v.name != 'none'")
    ours_ids = {k for k, _ in kernels}
    c.equal([row for row in inexact if row[0] in ours_ids], [],
            "none of the app's launches approximate or incomplete")
    for kernel_id, approximate, gap in inexact:
        if kernel_id not in ours_ids:
            print(f"note: cuBLAS kernel {kernel_id} under --exact: approximate {approximate},"
                  f" incomplete: {gap}")

    def accesses(kernel_id):
        return t.rows("SELECT e.alloc_id, e.lo - a.address, e.hi - a.address, e.access, e.lo "
                      "FROM exact_kernel_accesses e LEFT JOIN allocations a ON a.id = e.alloc_id "
                      "WHERE e.kernel_id = ? ORDER BY e.lo", kernel_id)
    for kernel_id, name in kernels:
        rows = accesses(kernel_id)
        ours = sorted((buffer[a], lo, hi, access) for a, lo, hi, access, _ in rows if a in buffer)
        if name in expected:
            c.equal(ours, sorted(expected[name]), f"exact ranges of {name}")
            continue
        c.equal(name, ours_last, "the last kernel")
        c.equal(ours, [(10, 0, 4096, R), (11, 0, 4096, W)], f"exact ranges of {name} in its buffers")
        past = [(a, lo) for a, lo, hi, access, _ in rows
                if a not in buffer and access == R and hi - lo == 32]
        c.equal(len(past), 1, f"one 32-byte read past the 4 KiB it was handed: {rows}")
    check_exact_sgemm(c, t, cublas, accesses)
    report = subprocess.run([base.APPTRACER, "stats", "--report", "exact", "--format", "csv", t.path],
                            capture_output=True, text=True)
    c.equal(report.returncode, 0, f"stats --report exact: {report.stderr.strip()}")
    lines = list(csv.reader(report.stdout.splitlines()))
    header = next((line for line in lines if line and line[0] == "kernel"), [])
    only_read = [dict(zip(header, line)) for line in lines if line and line[0].startswith("only_read")]
    c.expect(only_read and (only_read[0].get("rw_only_read"), only_read[0].get("rw_only_written"))
             == ("1", "1"), f"the report says only_read's x was only read, y only written: "
             f"{report.stdout}")


def exact_coverage(t, kernel_id):
    """What record --exact stored of a launch's coverage: {alloc_id (None: the launch): name}."""
    return dict(t.rows("SELECT c.alloc_id, v.name FROM exact_coverage c JOIN enum_values v "
                       "ON v.enum = 'exact_coverage' AND v.value = c.coverage WHERE c.kernel_id = ?",
                       kernel_id))


def exact_gap(t, kernel_id):
    return t.one("SELECT v.name FROM exact_launches e JOIN enum_values v ON v.enum = 'exact_gap' "
                 "AND v.value = e.incomplete WHERE e.kernel_id = ?", kernel_id)


def check_exact_tma(c, t):
    """Bulk copies are seen by the sanitizer, TMA tensor copies are not: the
    tensor kernel's launch is incomplete and not covered, so its arguments'
    accesses stand; the plain kernel reading both outputs keeps its exact
    ranges, and nothing is read uninitialized."""
    c.equal(t.meta("exact"), "on", "meta.exact")
    print(f"note: --exact path: {t.meta('exact_path')}")
    buffers = [i for (i,) in t.rows("SELECT id FROM allocations WHERE kind = ? AND bytes = 32768 "
                                    "ORDER BY id", E.DEVICE)]
    if len(buffers) != 5:
        c.expect(False, f"five 32 KiB device buffers, found {buffers}")
        return
    bulk_in, bulk_out, tensor_in, tensor_out, total = buffers
    kernel = {}
    for kernel_id, name in t.rows("SELECT k.id, d.text FROM kernels k JOIN strings d ON d.id = k.demangled_id"):
        for short in ("bulk_copy(", "tensor_copy(", "sum_outputs("):
            if short in name:
                kernel[short[:-1]] = kernel_id
    if len(kernel) != 3:
        c.expect(False, f"the three kernels, found {kernel}")
        return
    c.equal(exact_gap(t, kernel["bulk_copy"]), "none", "bulk copies are seen: bulk_copy complete")
    c.equal(exact_gap(t, kernel["tensor_copy"]), "TMA tensor copies", "tensor_copy incomplete")
    c.equal(exact_gap(t, kernel["sum_outputs"]), "none", "sum_outputs complete")

    def ranges(kernel_id):
        return sorted(t.rows("SELECT e.alloc_id, e.lo - a.address, e.hi - a.address, e.access "
                             "FROM exact_kernel_accesses e JOIN allocations a ON a.id = e.alloc_id "
                             "WHERE e.kernel_id = ?", kernel_id))
    R, W = E.ACCESS_R, E.ACCESS_W
    c.equal(ranges(kernel["bulk_copy"]), [(bulk_in, 0, 32768, R), (bulk_out, 0, 32768, W)],
            "bulk_copy's bulk copies, exact")
    c.equal(ranges(kernel["sum_outputs"]),
            sorted([(bulk_out, 0, 32768, R), (tensor_out, 0, 32768, R), (total, 0, 32768, W)]),
            "sum_outputs's exact ranges")
    c.equal([r for r in ranges(kernel["tensor_copy"]) if r[0] in (tensor_in, tensor_out)], [],
            "the sanitizer sees none of tensor_copy's tensor copies")
    c.equal(exact_coverage(t, kernel["bulk_copy"]), {None: "exact", bulk_in: "exact", bulk_out: "exact"},
            "bulk_copy's coverage")
    c.equal(exact_coverage(t, kernel["sum_outputs"]),
            {None: "exact", bulk_out: "exact", tensor_out: "exact", total: "exact"}, "sum_outputs's coverage")
    tensor_coverage = exact_coverage(t, kernel["tensor_copy"])
    c.equal(tensor_coverage.get(None), "none", "tensor_copy's launch not covered")
    resolved = tensor_coverage.keys() - {None}
    c.equal({tensor_coverage[a] for a in resolved} - {"none"}, set(), "tensor_copy's pointers not covered")
    print(f"note: tensor_copy's tensor maps resolved to {sorted(resolved)} "
          f"(tensor_in {tensor_in}, tensor_out {tensor_out})")

    graph = dvdg_json(c, t)
    c.equal(uninitialized_reads(graph), [], "no uninitialized read")
    op_of = {op["source_id"]: op["id"] for op in graph["ops"] if op["kind"] == "kernel"}
    value = {v["id"]: v for v in graph["values"]}
    read_by_sum = {value[e["src"]]["alloc_id"] for e in graph["edges"]
                   if e["op"] == op_of.get(kernel["sum_outputs"]) and e["kind"] == "data"}
    c.equal(read_by_sum, {bulk_out, tensor_out}, "sum_outputs reads the two outputs and nothing else")
    written_by_sum = {v["alloc_id"] for v in graph["values"] if v.get("producer_op") == op_of.get(kernel["sum_outputs"])}
    c.equal(written_by_sum, {total}, "sum_outputs writes only its result (its exact ranges)")
    if tensor_out in resolved:
        producers = {value[e["src"]].get("producer_op") for e in graph["edges"]
                     if e["op"] == op_of.get(kernel["sum_outputs"]) and value[e["src"]]["alloc_id"] == tensor_out}
        c.equal(producers, {op_of.get(kernel["tensor_copy"])},
                "what sum_outputs read of tensor_out, tensor_copy wrote (its arguments' access)")


def check_exact_pytorch_conv_gemm(c, t):
    """cuDNN's and cuBLAS's Hopper kernels under --exact: launches the
    sanitizer cannot see whole are not covered, and a correct program reads
    nothing uninitialized."""
    c.equal(t.meta("exact"), "on", "meta.exact")
    launches = t.rows("SELECT d.text, v.name, c.coverage IS NOT NULL FROM exact_launches e "
                      "JOIN kernels k ON k.id = e.kernel_id JOIN strings d ON d.id = k.demangled_id "
                      "JOIN enum_values v ON v.enum = 'exact_gap' AND v.value = e.incomplete "
                      "LEFT JOIN exact_coverage c ON c.launch_id = e.id AND c.alloc_id IS NULL")
    c.expect(launches and all(stored for _, _, stored in launches), "every launch's coverage stored")
    hopper = [(name, gap) for name, gap, _ in launches if name.startswith(("sm90_", "nvjet_"))]
    print(f"note: {len(hopper)} launches of cuDNN/cuBLAS Hopper kernels, "
          f"{sum(gap != 'none' for _, gap in hopper)} of them incomplete")
    c.expect(hopper, "cuDNN or cuBLAS ran Hopper kernels (sm90_*, nvjet_*)")
    graph = dvdg_json(c, t)
    reads = uninitialized_reads(graph)
    c.equal(len(reads), 0, f"no uninitialized read (the first: {reads[:3]})")
    findings = diagnose_findings(c, t)
    c.equal([f["what"] for f in findings if f["rule"] == "uninitialized_read"], [],
            "no uninitialized_read finding")


CASES = {
    "kernel_args": Case(check_kernel_args),
    "exact_patterns": Case(check_exact_patterns, record_args=["--exact"]),
    "exact_tma": Case(check_exact_tma, record_args=["--exact"]),
    "exact_pytorch_conv_gemm": Case(check_exact_pytorch_conv_gemm, "pytorch_conv_gemm.py",
                                    timing_lines="pytorch_conv_gemm: ", record_args=["--exact"]),
}
