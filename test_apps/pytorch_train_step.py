#!/usr/bin/env python3
"""One training step of a small MLP with PyTorch's caching allocator: the
GPU check that the DVDG sees tensors, not the allocator's segments.

Prints (lines starting "pytorch_train_step: ", which differ run to run) the
addresses the check needs: each parameter's and its gradient's storage, the
input batch's, and the loss's. Exits 77 where torch or a GPU is missing.
"""
import json
import sys

try:
    import torch
except ImportError:
    print("no torch here")
    sys.exit(77)


def main():
    if not torch.cuda.is_available():
        print("no CUDA GPU for torch")
        return 77
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).cuda()
    # One kernel per parameter update (no multi-tensor kernels): each update
    # is an operation of its own in the trace.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, foreach=False)
    inputs_host = torch.randn(128, 256)
    labels_host = torch.randint(0, 10, (128,))
    inputs = inputs_host.to("cuda")  # the batch's host-to-device copy
    labels = labels_host.to("cuda")
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    loss.backward()
    facts = {
        "params": {name: p.data_ptr() for name, p in model.named_parameters()},
        "param_bytes": {name: p.numel() * p.element_size() for name, p in model.named_parameters()},
        "grads": {name: p.grad.data_ptr() for name, p in model.named_parameters()},
        "input": inputs.data_ptr(),
        "input_bytes": inputs.numel() * inputs.element_size(),
        "loss": loss.data_ptr(),
    }
    optimizer.step()
    value = loss.item()  # the loss's device-to-host copy
    torch.cuda.synchronize()
    print("pytorch_train_step: " + json.dumps(facts))
    print(f"pytorch_train_step: loss {value:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
