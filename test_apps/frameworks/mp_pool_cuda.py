"""multiprocessing: spawn and forkserver pools whose workers use CUDA."""
import multiprocessing as mp


def work(i):
    import torch
    return int((torch.full((1024,), float(i), device="cuda") * 2).sum().item())


if __name__ == "__main__":
    for method in ("spawn", "forkserver"):
        with mp.get_context(method).Pool(2) as pool:
            print(method, sum(pool.map(work, range(4))))
