"""GPT-2-style training (transformers' GPT2LMHeadModel from a config, no
weights): bf16 autocast, AdamW (foreach), the caching allocator's churn of a
real model. One NVTX range per step; the loss every 100 steps.

    transformer_train.py STEPS
"""
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging

from marks import mark

logging.set_verbosity_error()
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
torch.manual_seed(0)
config = GPT2Config(n_layer=6, n_embd=384, n_head=6, vocab_size=4096, n_positions=256,
                    bos_token_id=0, eos_token_id=0)
model = GPT2LMHeadModel(config).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True)
tokens = torch.randint(0, config.vocab_size, (8, 256), device="cuda")
for step in range(1, steps + 1):
    torch.cuda.nvtx.range_push("step")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(tokens, labels=tokens).loss
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    torch.cuda.nvtx.range_pop()
    if step % 100 == 0:
        print(f"step {step} loss {loss.item():.3f}", flush=True)
    mark(step)
