# %% [markdown]
# # A trace in a notebook
#
# What `vector_add` did, from its trace, with pandas and networkx: which
# kernels ran, how fast the copies were, where the result came from, and
# what to fix. Runs as a script too (`python examples/notebook_tour.py
# examples/vector_add.db`); Jupyter and VS Code open it as a notebook
# (`# %%` cells; `jupytext --to notebook` converts it).

# %%
import sys

import networkx as nx

import apptracer

path = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].endswith(".db") else "examples/vector_add.db"
t = apptracer.open(path)  # times in microseconds from the trace's start
print("trace:", t.meta["command_line"], "-", t.meta["status"])

# %% [markdown]
# Kernels: one row per launch, names demangled, enums as words.

# %%
kernels = t.kernels
kernels["gpu_us"] = kernels.gpu_end_us - kernels.gpu_start_us
print("kernels:", len(kernels))
for row in kernels.itertuples():
    print(f"kernel: {row.demangled} grid {row.grid_x} block {row.block_x} "
          f"{row.gpu_us:.1f} us ({row.launch_kind})")

# %% [markdown]
# Copies: achieved bandwidth per direction and memory kind.

# %%
copies = t.copies
copies["gb_per_s"] = copies.bytes / ((copies.gpu_end_us - copies.gpu_start_us) * 1e3)
by_kind = copies.groupby(["kind", "src_memory", "dst_memory"]).agg(
    copies=("bytes", "size"), bytes=("bytes", "sum"), gb_per_s=("gb_per_s", "mean"))
for (kind, src, dst), row in by_kind.iterrows():
    print(f"copies: {kind} {src}->{dst}: {int(row.copies)} copies, {row.bytes / 2**20:.0f} MiB, "
          f"{row.gb_per_s:.1f} GB/s")

# %% [markdown]
# The data-flow graph (built by `apptracer dvdg`): where did the result,
# the last value written to host memory, come from?

# %%
g = t.dvdg()
print(f"dvdg: {g.number_of_nodes()} values, {g.number_of_edges()} edges")
result = max((v for v, d in g.nodes(data=True) if d["memory"] == "pageable"),
             key=lambda v: (g.in_degree(v) > 0, v))
sources = sorted(v for v in nx.ancestors(g, result) if g.in_degree(v) == 0)
ops = g.graph["ops"]  # op_id -> the operation: kind, copy_kind, name, device, stream, start, end
operations = {ops[d["op_id"]]["name"] or f"{ops[d['op_id']]['copy_kind']} {ops[d['op_id']]['kind']}"
              for _, _, d in g.edges(data=True)}
print(f"dvdg: v{result} comes from {', '.join(f'v{v}' for v in sources)} through "
      f"{', '.join(sorted(operations))}")

# %% [markdown]
# The analyzer's summaries and diagnoses as DataFrames.

# %%
api = t.stats("api")
print("api: slowest call", api.sort_values("total_ns", ascending=False).iloc[0]["name"])
findings = t.diagnose().sort_values("saving_ns", ascending=False)
top = findings.iloc[0]
print(f"diagnose: {len(findings)} findings; top: {top.rule} saves {top.saving_ns / 1e6:.2f} ms")
