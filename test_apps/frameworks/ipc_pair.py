"""CUDA IPC: a parent shares a tensor with a spawned child (torch.multiprocessing),
the child computes on it and the parent sees the result."""
import torch
import torch.multiprocessing as mp


def child(shared, done):
    shared.mul_(3)
    torch.cuda.synchronize()
    done.set()


if __name__ == "__main__":
    context = mp.get_context("spawn")
    shared = torch.ones(1 << 20, device="cuda")
    done = context.Event()
    process = context.Process(target=child, args=(shared, done))
    process.start()
    done.wait()
    process.join()
    print("after child", int(shared.sum().item()), "exit", process.exitcode)
