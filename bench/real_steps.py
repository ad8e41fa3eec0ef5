"""Real programs for the benchmark, each a step the user pays for on every
iteration (GPU): prints the median step time in microseconds on its last
line, for compare.sh. With BENCH_TORCH_PROFILER=1 the steps run under
torch.profiler (CPU and CUDA activities).

    python3 real_steps.py transformer|generate|dataloader [STEPS] [WARMUP]

transformer: GPT-2-style training (transformers' GPT2LMHeadModel from a
  config: 6 layers, width 384, bf16 autocast, AdamW foreach), one step a
  forward, backward and optimizer step;
generate: the same model's greedy generate() of 32 tokens with its KV cache,
  one step a whole generate call;
dataloader: an MLP fed by a DataLoader with two workers and pinned memory,
  one step a batch.
"""
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


def main():
    workload = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    warmup = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    torch.manual_seed(0)
    step = {"transformer": transformer_step, "generate": generate_step,
            "dataloader": dataloader_step}[workload]()
    times = []
    with profiler():
        for i in range(warmup + steps):
            torch.cuda.synchronize()
            start = time.perf_counter()
            step()
            torch.cuda.synchronize()
            if i >= warmup:
                times.append((time.perf_counter() - start) * 1e6)
    print(f"{statistics.median(times):.1f}")


if __name__ == "__main__":
    main()
