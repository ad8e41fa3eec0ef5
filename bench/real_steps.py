"""Real programs for the benchmark, each a step the user pays for on every
iteration (GPU): prints the median step time in microseconds on its last
line, for compare.sh. With BENCH_TORCH_PROFILER=1 the steps run under
torch.profiler (CPU and CUDA activities), with BENCH_EMIT_NVTX=1 under
torch.autograd.profiler.emit_nvtx.

    python3 real_steps.py WORKLOAD[,WORKLOAD...] [STEPS] [WARMUP]

Several workloads run one after the other in the same process (one Python
start for all), and the last line names each: "resnet=11230.5 vit=44610.2".
With BENCH_HOST_CPU=1 each workload also gives WORKLOAD_cpu: the median CPU
time of the program's own thread while it issues a step (the step's call, up
to the synchronization after it), in microseconds. On a virtual host whose
cores are shared, wall times of one variant spread by half; a thread's CPU
time leaves out the time it was not running, and it is where a tracer's
callbacks and hooks on that thread are paid (not its writer thread's).
Models are built from their configurations: nothing is downloaded.

transformer: GPT-2-style training (transformers' GPT2LMHeadModel from a
  config: 6 layers, width 384, bf16 autocast, AdamW foreach), one step a
  forward, backward and optimizer step;
resnet: ResNet-style training (torchvision's resnet18, channels_last, bf16
  autocast, SGD with momentum, batch 64 at 96x96);
vit: ViT-style training (timm's vit_tiny_patch16_224 at 112x112, batch 32,
  bf16 autocast, fused AdamW);
generate: the same model's greedy generate() of 32 tokens with its KV cache,
  one step a whole generate call;
dataloader: an MLP fed by a DataLoader with two workers and pinned memory,
  one step a batch;
gcn: graph training (torch_geometric's GCNConv, two layers, 20,000 nodes of
  128 features, 200,000 random edges, Adam), one step a full-graph forward,
  backward and optimizer step;
lightning: a LightningModule MLP trained by pytorch_lightning's Trainer.fit
  (AdamW, batches of 256 from a DataLoader), one step a batch as a callback
  times it (not under BENCH_TORCH_PROFILER: Lightning owns the loop).
"""
import os
import statistics
import sys
import time

import torch

from pytorch_steps import profiler


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.utils import logging
    logging.set_verbosity_error()
    config = GPT2Config(n_layer=6, n_embd=384, n_head=6, vocab_size=4096, n_positions=256,
                        bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(config).cuda(), config


def transformer_step():
    model, config = gpt2()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)
    tokens = torch.randint(0, config.vocab_size, (8, 256), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(tokens, labels=tokens).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step


def generate_step():
    model, config = gpt2()
    model.eval()
    prompt = torch.randint(0, config.vocab_size, (1, 32), device="cuda")

    def step():
        with torch.no_grad():
            model.generate(prompt, max_new_tokens=32, min_new_tokens=32, do_sample=False,
                           pad_token_id=0)
    return step


def image_training_step(model, optimizer, batch, size, channels_last):
    model = model.cuda()
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    images = torch.randn(batch, 3, size, size, device="cuda")
    if channels_last:
        images = images.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (batch,), device="cuda")
    optimizer = optimizer(model.parameters())

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step


def resnet_step():
    import torchvision
    return image_training_step(
        torchvision.models.resnet18(num_classes=1000),
        lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9), batch=64, size=96,
        channels_last=True)


def vit_step():
    import timm
    return image_training_step(
        timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=112, num_classes=1000),
        lambda params: torch.optim.AdamW(params, lr=1e-3, fused=True), batch=32, size=112,
        channels_last=False)


class Synthetic(torch.utils.data.Dataset):
    def __len__(self):
        return 1 << 30

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        return torch.randn(512, generator=generator), index % 10


def dataloader_step():
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = iter(torch.utils.data.DataLoader(Synthetic(), batch_size=64, num_workers=2,
                                              pin_memory=True))

    def step():
        x, y = next(loader)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step


def gcn_step():
    from torch_geometric.nn import GCNConv
    nodes, features, classes = 20_000, 128, 16
    generator = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(nodes, features, device="cuda", generator=generator)
    edges = torch.randint(0, nodes, (2, 200_000), device="cuda", generator=generator)
    labels = torch.randint(0, classes, (nodes,), device="cuda", generator=generator)

    class GCN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.first, self.second = GCNConv(features, 256), GCNConv(256, classes)

        def forward(self, x, edges):
            return self.second(torch.relu(self.first(x, edges)), edges)

    model = GCN().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def step():
        loss = torch.nn.functional.cross_entropy(model(x, edges), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step


def lightning_times(steps, warmup):
    """Lightning owns the training loop: its Trainer.fit runs the steps and a
    callback times each batch (synchronized at both ends, as the others are)."""
    import pytorch_lightning as pl

    class Classifier(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(),
                                           torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                                           torch.nn.Linear(2048, 10))

        def training_step(self, batch, index):
            x, y = batch
            return torch.nn.functional.cross_entropy(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    class StepTimes(pl.Callback):
        def __init__(self):
            self.times, self.start = [], 0.0

        def on_train_batch_start(self, trainer, module, batch, index):
            torch.cuda.synchronize()
            self.start = time.perf_counter()

        def on_train_batch_end(self, trainer, module, outputs, batch, index):
            torch.cuda.synchronize()
            self.times.append((time.perf_counter() - self.start) * 1e6)

    data = torch.utils.data.TensorDataset(torch.randn(256 * 64, 512), torch.randint(0, 10, (256 * 64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=256, shuffle=False)
    timer = StepTimes()
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_steps=warmup + steps, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         callbacks=[timer])
    trainer.fit(Classifier(), loader)
    return timer.times[warmup:], None


def stepped(make_step):
    """A workload whose step this program calls: its step times, and the
    thread's CPU time issuing each."""
    def times(steps, warmup):
        step = make_step()
        result, cpu = [], []
        with profiler():
            for i in range(warmup + steps):
                torch.cuda.synchronize()
                start = time.perf_counter()
                start_cpu = time.thread_time()
                step()
                issued_cpu = time.thread_time()
                torch.cuda.synchronize()
                if i >= warmup:
                    result.append((time.perf_counter() - start) * 1e6)
                    cpu.append((issued_cpu - start_cpu) * 1e6)
        return result, cpu
    return times


# The workloads whose step this program calls, by the function making it.
STEPS = {"transformer": transformer_step, "generate": generate_step, "dataloader": dataloader_step,
         "resnet": resnet_step, "vit": vit_step, "gcn": gcn_step}
WORKLOADS = {**{name: stepped(make) for name, make in STEPS.items()}, "lightning": lightning_times}


def median_step_us(workload, steps, warmup):
    """The median step's wall time, and its thread CPU time (None where the
    program does not call the step itself)."""
    torch.manual_seed(0)
    wall, cpu = WORKLOADS[workload](steps, warmup)
    return statistics.median(wall), statistics.median(cpu) if cpu else None


def main():
    workloads = sys.argv[1].split(",")
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        sys.exit(f"real_steps.py: unknown workload {unknown[0]}; choose from {', '.join(WORKLOADS)}")
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    warmup = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    host_cpu = os.environ.get("BENCH_HOST_CPU") == "1"
    medians = {}
    for workload in workloads:
        medians[workload], cpu = median_step_us(workload, steps, warmup)
        if host_cpu and cpu is not None:
            medians[workload + "_cpu"] = cpu
        # The next workload starts with the memory this one held back in the pool.
        torch.cuda.empty_cache()
    if len(medians) == 1:
        print(f"{medians[workloads[0]]:.1f}")
    else:
        print(" ".join(f"{w}={us:.1f}" for w, us in medians.items()))


if __name__ == "__main__":
    main()
