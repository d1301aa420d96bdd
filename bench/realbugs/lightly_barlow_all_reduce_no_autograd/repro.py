"""Reproduction for `lightly_barlow_all_reduce_no_autograd`: lightly-ai/lightly commit 617f4eaf ("fix(loss): use autograd-aware all_reduce in BarlowTwinsLoss").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `c = c / world_size; dist.all_reduce(c)` sums the cross-correlation matrix across ranks in place,
outside autograd, so each rank's backward only sees its local share and, after DDP's gradient averaging,
the gradient is 1/world_size of the single-process gradient on the global batch; the fix uses the
autograd-aware `torch.distributed.nn.all_reduce(c / world_size)`.
Runs two CPU processes with the gloo backend on 127.0.0.1.
"""

import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed import nn as dist_nn

WS, N, D = 2, 4, 3


def loss_of(c):
    on = torch.diagonal(c).add(-1).pow(2).sum()
    off = (c - torch.diag(torch.diagonal(c))).pow(2).sum()
    return on + 0.005 * off


def local_grad(rank, fixed, za_all, zb_all):
    w = torch.nn.Parameter(torch.eye(D) + 0.1)
    za, zb = za_all[rank * N:(rank + 1) * N] @ w, zb_all[rank * N:(rank + 1) * N] @ w
    c = za.T @ zb / N
    if fixed:
        c = dist_nn.all_reduce(c / WS)
    else:
        c = c / WS
        dist.all_reduce(c)                       # buggy: not recorded by autograd
    loss_of(c).backward()
    g = w.grad.clone()
    dist.all_reduce(g)                           # DDP averages gradients over ranks
    return g / WS


def worker(rank, path, out):
    dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=WS)
    torch.manual_seed(0)
    za_all, zb_all = torch.randn(WS * N, D), torch.randn(WS * N, D)
    res = {"buggy": local_grad(rank, False, za_all, zb_all), "fixed": local_grad(rank, True, za_all, zb_all)}
    if rank == 0:
        # single process on the global batch: the reference gradient
        w = torch.nn.Parameter(torch.eye(D) + 0.1)
        za, zb = za_all @ w, zb_all @ w
        c = sum(za[r * N:(r + 1) * N].T @ zb[r * N:(r + 1) * N] / N for r in range(WS)) / WS
        loss_of(c).backward()
        res["ref"] = w.grad.clone()
        torch.save(res, out)
    dist.destroy_process_group()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "res.pt")
        mp.spawn(worker, args=(os.path.join(d, "store"), out), nprocs=WS)
        res = torch.load(out)
    assert torch.allclose(res["fixed"], res["ref"], atol=1e-6)
    assert torch.allclose(res["buggy"] * WS, res["ref"], atol=1e-6)   # buggy gradient is 1/world_size too small
    assert not torch.allclose(res["buggy"], res["ref"], atol=1e-3)
    print("CONFIRMED")
