#!/usr/bin/env python3
"""GPU data exchanged through MPI (mpi4py), one process per rank under
mpirun: per iteration, a kernel doubles a GPU tensor, the tensor is copied
to host memory, the ranks sum it (MPI_Allreduce), swap the sums with their
neighbour (MPI_Sendrecv), broadcast rank 0's (MPI_Bcast), and the result is
copied back to the GPU. With --device-buffers the same calls take the GPU
tensors themselves (CUDA-aware MPI; skipped, exit 77, where the MPI library
is not). Prints a checksum per rank, the same traced and untraced.

    mpirun -np 2 python3 mpi_exchange.py [--iterations N] [--device-buffers]
"""
import argparse
import sys

import numpy as np
import torch
from mpi4py import MPI

ELEMENTS = 1 << 18


def cuda_aware():
    query = getattr(MPI, "Query_cuda_support", None)
    return bool(query and query())


def exchange(comm, send, work):
    """Allreduce, then Sendrecv with the next rank, then Bcast from rank 0:
    every kind of MPI data movement the tracer records."""
    rank, world = comm.Get_rank(), comm.Get_size()
    comm.Allreduce(send, work["sum"], op=MPI.SUM)
    comm.Sendrecv(work["sum"], dest=(rank + 1) % world, recvbuf=work["swapped"],
                  source=(rank - 1) % world)
    comm.Bcast(work["swapped"], root=0)
    return work["swapped"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--device-buffers", action="store_true")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if args.device_buffers and not cuda_aware():
        print("the MPI library is not CUDA-aware", file=sys.stderr)
        return 77
    torch.cuda.set_device(rank % torch.cuda.device_count())
    x = torch.full((ELEMENTS,), float(rank + 1), device="cuda")
    if args.device_buffers:
        work = {name: torch.empty_like(x) for name in ("sum", "swapped")}
    else:
        work = {name: np.empty(ELEMENTS, dtype=np.float32) for name in ("sum", "swapped")}
    for iteration in range(args.iterations):
        torch.cuda.nvtx.range_push(f"step {iteration + 1}")
        doubled = x * 2
        if args.device_buffers:
            torch.cuda.synchronize()
            x = exchange(comm, doubled, work).clone() / 4
        else:
            result = exchange(comm, doubled.cpu().numpy(), work)
            x = torch.from_numpy(result).cuda() / 4
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"rank {rank}: {x.sum().item():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
