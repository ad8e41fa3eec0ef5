#!/usr/bin/env python3
"""PyTorch with CUDA graphs and NVTX, and the checks on its trace.

    pytorch_graphs_nvtx.py run          # the program (run under apptracer record)
    pytorch_graphs_nvtx.py check TRACE [APPTRACER]  # exits 1 if an assertion fails

The program captures an MLP's forward and backward into a torch.cuda.CUDAGraph
and replays it 20 times inside nested NVTX ranges on the main thread, while a
second thread pushes ranges of its own; then a torch.compile(mode=
"reduce-overhead") model runs 10 steps when torch.compile works here. With
APPTRACER, the check also runs `dvdg --nvtx step` and `timeline` on the trace.
"""
import json
import sqlite3
import subprocess
import sys
import threading

REPLAYS = 20


def run():
    import torch

    nvtx = torch.cuda.nvtx
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    static_in = torch.randn(64, 256, device="cuda")
    # Warm up on a side stream, as torch.cuda.graphs asks, then capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(static_in).sum().backward()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = model(static_in).sum()
        static_loss.backward()

    def worker():
        for i in range(5):
            nvtx.range_push("worker step")
            nvtx.range_push("worker inner")
            nvtx.range_pop()
            nvtx.range_pop()

    thread = threading.Thread(target=worker)
    thread.start()
    nvtx.range_push("train")
    for step in range(REPLAYS):
        nvtx.range_push("step")
        static_in.copy_(torch.randn(64, 256, device="cuda"))
        graph.replay()
        nvtx.mark("replayed")
        nvtx.range_pop()
    handle = nvtx.range_start("sync")
    torch.cuda.synchronize()
    nvtx.range_end(handle)
    nvtx.range_pop()
    thread.join()
    print(f"pytorch_graphs_nvtx: loss {static_loss.item():.3f}")
    try:
        compiled = torch.compile(model, mode="reduce-overhead")
        for _ in range(10):
            compiled(static_in).sum().backward()
        torch.cuda.synchronize()
        print("pytorch_graphs_nvtx: torch.compile reduce-overhead ran")
    except Exception as error:  # no Triton or compiler here: the rest still counts
        print(f"pytorch_graphs_nvtx: torch.compile skipped ({type(error).__name__})")


def check(path, apptracer=None):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    failures = []

    def expect(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    graph_kind = db.execute("SELECT value FROM enum_values WHERE enum = 'launch_kind' "
                            "AND name = 'graph'").fetchone()[0]
    total, resolved = db.execute(
        "SELECT count(*), sum(EXISTS (SELECT 1 FROM kernel_args a WHERE a.kernel_id = k.id "
        "AND a.alloc_id IS NOT NULL)) FROM kernels k WHERE k.launch_kind = ? AND EXISTS "
        "(SELECT 1 FROM kernel_args a WHERE a.kernel_id = k.id)", (graph_kind,)).fetchone()
    print(f"graph-run kernels taking pointers: {total}, resolved: {resolved}")
    expect(total > 0 and (resolved or 0) >= 0.99 * total,
           ">= 99% of graph-run kernels that take pointers have them resolved")
    expect(db.execute("SELECT count(*) FROM graph_nodes WHERE captured = 1").fetchone()[0] > 0,
           "the capture made graph nodes")

    def ranges(name):
        return db.execute("SELECT r.tid, r.depth, r.end_ns IS NOT NULL FROM nvtx_ranges r "
                          "JOIN strings s ON s.id = r.name_id WHERE s.text = ?", (name,)).fetchall()
    train, step = ranges("train"), ranges("step")
    expect([(d, e) for _, d, e in train] == [(0, 1)], f"one closed 'train' range at depth 0: {train}")
    expect(len(step) == REPLAYS and {(d, e) for _, d, e in step} == {(1, 1)},
           f"{REPLAYS} closed 'step' ranges nested in it")
    expect(len(ranges("replayed")) == REPLAYS, "a mark per replay")
    worker = ranges("worker inner")
    expect(len(worker) == 5 and {d for _, d, _ in worker} == {1}
           and {t for t, _, _ in worker} != {train[0][0] if train else None},
           "the worker thread's ranges nest on their own thread")
    expect(len(ranges("sync")) == 1, "the start/end range")
    if apptracer:
        # The analyzer's views of the ranges, on this real trace: the DVDG
        # restricted to the 'step' ranges, and the timeline's NVTX tracks.
        dvdg = subprocess.run([apptracer, "dvdg", "--no-store", path, "--nvtx", "step", "--format", "json", "-o", "-"],
                              capture_output=True, text=True)
        ops = json.loads(dvdg.stdout)["ops"] if dvdg.returncode == 0 else []
        everything = sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                         for t in ("kernels", "memcpys", "memsets"))
        expect(0 < len(ops) < everything, f"dvdg --nvtx step: {len(ops)} of {everything} operations fall "
                                          f"inside the 'step' ranges ({dvdg.stderr.strip()[-200:]})")
        timeline = subprocess.run([apptracer, "timeline", "--format", "chrome-json", "-o", "-", path],
                                  capture_output=True, text=True)
        events = json.loads(timeline.stdout).get("traceEvents", []) if timeline.returncode == 0 else []
        # Host-side ranges, under Kineto's category for them (HTA reads it).
        nvtx = [e for e in events if e.get("cat") == "user_annotation"]
        expect(sum(e["name"] == "step" for e in nvtx) == REPLAYS and any(e["name"] == "train" for e in nvtx),
               f"the timeline's NVTX tracks hold the ranges ({len(nvtx)} NVTX events)")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run()
    else:
        sys.exit(check(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
