"""PyTorch programs with a problem and their fixed twins, for diagnose_truth.py
--frameworks: each runs STEPS training steps (NVTX range "step" each) after
WARMUP, and prints "work_ms X" (the measured steps' wall time), "steps N"
and "peak_bytes B" (torch.cuda.max_memory_allocated over the run) on
stderr, as test_apps/diagnose_cases does.

    python3 framework_twins.py SCENARIO bad|fixed [--time] [STEPS] [WARMUP]

Scenarios (the rule whose saving the bad one prices, and the whatif change
that predicts the fixed one from the bad one's trace):
  launch_bound  a small CNN's step (batch 32, 64x64, bf16, SGD), eager vs the
                same step captured whole with torch.cuda.graph and replayed
                (launch_bound_kernels; whatif --graphs)
  pageable      a batch a DataLoader made (32 8-bit images of 512x512, 25 MB)
                copied in each step and made the model's input on the GPU,
                from pageable memory vs pinned memory (pin_memory=True) with
                non_blocking=True (pageable_copy; whatif --pin)
  item          loss.item() each step vs never (sync_api); launch-bound: the
                host reaches .item() after the GPU has finished, so there is
                little to wait for
  item_stall    the same on a GPU-bound step (a wide bf16 MLP, about 25 ms of
                GPU work) whose batch the loop augments on the CPU at the
                start of each step: with .item() the GPU idles while the host
                prepares the next batch, without it that work overlaps the
                GPU's previous step (sync_api; whatif --no-syncs)
  leak          an MLP step whose loss is kept each step for logging, as
                loss.detach() (a view: mse_loss's whole 1 MiB storage stays)
                vs loss.detach().clone() (its value alone) (memory_leak; its
                saving is bytes at the peak)
"""
import itertools
import sys
import time

import torch

SCENARIOS = ("launch_bound", "pageable", "item", "item_stall", "leak")


def small_cnn():
    layers = []
    channels = 3
    for width in (32, 32, 64, 64, 128, 128, 256, 256):
        layers += [torch.nn.Conv2d(channels, width, 3, padding=1, bias=False),
                   torch.nn.BatchNorm2d(width), torch.nn.ReLU()]
        channels = width
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(channels, 10)]
    return torch.nn.Sequential(*layers)


class Step:
    """One training step on static input tensors (a captured graph reads them)."""

    def __init__(self, device):
        self.model = small_cnn().to(device).to(memory_format=torch.channels_last)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.inputs = torch.randn(32, 3, 64, 64, device=device).to(memory_format=torch.channels_last)
        self.targets = torch.randint(0, 10, (32,), device=device)

    def __call__(self):
        self.optimizer.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(self.model(self.inputs), self.targets)
        loss.backward()
        self.optimizer.step()
        return loss


class AugmentedBatchStep:
    """A GPU-bound training step whose batch the loop prepares on the CPU
    first, as one augmenting its own images does: 2048 8-bit 32x32 images
    drawn from a data set in host memory, flipped at random, brightness-
    jittered and normalised with torch's CPU ops, then pinned and copied
    with non_blocking=True (11.5 ms of host time a step on an H200 host).
    The model, an MLP of 3072 -> 16384, three 16384 -> 16384 layers and
    16384 -> 10 in bf16 autocast (25 ms of GPU work, 4.5 ms of launches
    there), keeps the GPU busy longer than the host's whole step, so a host
    that does not wait prepares the next batch while the GPU runs this step.
    Narrower (3072 -> 8192, six 8192 -> 8192: 13 ms of GPU work) the
    host's step outlasted the GPU's, and the fixed twin was host-bound."""

    BATCH = 2048

    def __init__(self, device):
        self.device = device
        widths = [3 * 32 * 32] + [16384] * 4
        layers = []
        for fan_in, fan_out in zip(widths, widths[1:]):
            layers += [torch.nn.Linear(fan_in, fan_out, device=device), torch.nn.GELU()]
        self.model = torch.nn.Sequential(*layers, torch.nn.Linear(widths[-1], 10, device=device))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.images = torch.randint(0, 256, (8 * self.BATCH, 3, 32, 32), dtype=torch.uint8)
        self.labels = torch.randint(0, 10, (len(self.images),))
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)

    def next_batch(self):
        """The next batch's inputs and labels, on the GPU (their copies queued)."""
        picked = torch.randint(len(self.images), (self.BATCH,))
        images = self.images[picked].float()
        flipped = torch.rand(self.BATCH, 1, 1, 1) < 0.5
        images = torch.where(flipped, images.flip(3), images)
        images.mul_(torch.empty(self.BATCH, 1, 1, 1).uniform_(0.8, 1.2)).clamp_(0, 255)
        images = images.div_(255).sub_(self.mean).div_(self.std).to(torch.bfloat16).flatten(1)
        return (images.pin_memory().to(self.device, non_blocking=True),
                self.labels[picked].pin_memory().to(self.device, non_blocking=True))

    def __call__(self):
        inputs, targets = self.next_batch()
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(self.model(inputs), targets)
        loss.backward()
        self.optimizer.step()
        return loss


class KeptLossStep:
    """An MLP's training step (batch 256, 1024 -> 2048 -> 1024, SGD) whose
    loss a list keeps across steps, as a training loop logging it does."""

    def __init__(self, device, keep):
        self.model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(),
                                         torch.nn.Linear(2048, 1024)).to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=1e-2, momentum=0.9)
        self.inputs = torch.randn(256, 1024, device=device)
        self.targets = torch.randn(256, 1024, device=device)
        self.keep = keep
        self.kept = []

    def __call__(self):
        loss = torch.nn.functional.mse_loss(self.model(self.inputs), self.targets)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.kept.append(self.keep(loss))
        return loss


def captured(step):
    """The step captured whole in a CUDA graph, after warm-up on a side stream."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def make_step(scenario, variant, device):
    if scenario == "leak":
        return KeptLossStep(device, (lambda loss: loss.detach().clone()) if variant == "fixed"
                            else (lambda loss: loss.detach()))
    step = AugmentedBatchStep(device) if scenario == "item_stall" else Step(device)
    if scenario == "launch_bound":
        return captured(step) if variant == "fixed" else step
    if scenario == "pageable":
        # Batches as a DataLoader hands them to the training loop: made by its
        # workers, and in the fixed twin pinned by its pin thread
        # (pin_memory=True), both off the loop's thread (here once, up
        # front). Made or pinned inside the step, they cost the loop more
        # than pinned memory saves it, and that twin measured no faster.
        # Images as they are stored (8-bit, full size), scaled down on the
        # GPU: the copy is large enough beside this launch-bound step that
        # what pinning saves stands out of its rounds' spread (a 1.5 MB
        # batch of the model's own input saved less than steps vary).
        pinned = variant == "fixed"
        batches = [torch.randint(0, 256, (32, 3, 512, 512), dtype=torch.uint8) for _ in range(4)]
        if pinned:
            batches = [batch.pin_memory() for batch in batches]
        on_device = torch.empty((32, 3, 512, 512), dtype=torch.uint8, device=device)
        taken = itertools.count()

        def copy_batch_then_step():
            on_device.copy_(batches[next(taken) % len(batches)], non_blocking=pinned)
            step.inputs.copy_(torch.nn.functional.avg_pool2d(on_device.float(), 8))
            return step()
        return copy_batch_then_step

    def step_then_read_loss():
        loss = step()
        if variant == "bad":
            loss.item()
        return loss
    return step_then_read_loss


def main():
    args = [a for a in sys.argv[1:] if a != "--time"]
    if len(args) < 2 or args[0] not in SCENARIOS or args[1] not in ("bad", "fixed"):
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(SCENARIOS)}}} bad|fixed [--time] [STEPS] [WARMUP]")
    scenario, variant = args[0], args[1]
    steps = int(args[2]) if len(args) > 2 else 50
    warmup = int(args[3]) if len(args) > 3 else 10
    torch.manual_seed(0)
    device = torch.device("cuda")
    run = make_step(scenario, variant, device)
    for _ in range(warmup):
        torch.cuda.nvtx.range_push("step")
        run()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        torch.cuda.nvtx.range_push("step")
        run()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"work_ms {elapsed * 1e3:.3f}", file=sys.stderr)
    print(f"steps {steps}", file=sys.stderr)
    print(f"peak_bytes {torch.cuda.max_memory_allocated()}", file=sys.stderr)


if __name__ == "__main__":
    main()
