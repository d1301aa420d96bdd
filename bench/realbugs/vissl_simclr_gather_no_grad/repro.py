"""Reproduction for `vissl_simclr_gather_no_grad`: facebookresearch/vissl commit dbcb801f ("Gradients were not correctly propagated through the SimCLR Info NCE loss when the world size was strictly above 1 (#123)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `gather_embeddings` used classy_vision's `gather_from_all`, a plain `torch.distributed.all_gather` into
fresh tensors, so the gathered side of the similarity matrix carries no graph: with world_size > 1 the gradient
flowing through the gathered embeddings is lost and differs from the single-process gradient on the same global
batch. The fix gathers with an autograd Function (`GatherLayer`) whose backward all-reduces the gradients.
Runs two CPU processes with the gloo backend.
"""

import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WS, B, D = 2, 4, 3


def plain_gather(x):                                  # classy_vision gather_from_all
    out = [torch.zeros_like(x) for _ in range(WS)]
    dist.all_gather(out, x)
    return torch.cat(out)


class GatherLayer(torch.autograd.Function):           # the fix
    @staticmethod
    def forward(ctx, x):
        out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        g = torch.stack(grads)
        dist.all_reduce(g)
        return g[dist.get_rank()]


def info_nce(local, gathered, offset):
    sim = local @ gathered.T / 0.1
    idx = torch.arange(len(local))
    sim = sim.masked_fill(torch.zeros_like(sim, dtype=torch.bool).index_put_((idx, idx + offset), torch.tensor(True)), -1e9)
    pos = (idx + offset + len(local) // 2) % (len(local)) + offset
    return torch.nn.functional.cross_entropy(sim, pos)


def rank_grad(rank, fixed, x_all):
    w = torch.nn.Parameter(torch.eye(D) + 0.1)
    emb = torch.nn.functional.normalize(x_all[rank * B:(rank + 1) * B] @ w, dim=1)
    gathered = torch.cat(GatherLayer.apply(emb)) if fixed else plain_gather(emb)
    info_nce(emb, gathered, rank * B).backward()
    g = w.grad.clone()
    dist.all_reduce(g)                                 # DDP averages gradients
    return g / WS


def worker(rank, path, out):
    dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=WS)
    torch.manual_seed(0)
    x_all = torch.randn(WS * B, D)
    res = {"buggy": rank_grad(rank, False, x_all), "fixed": rank_grad(rank, True, x_all)}
    if rank == 0:                                      # reference: one process, same global batch
        w = torch.nn.Parameter(torch.eye(D) + 0.1)
        emb = torch.nn.functional.normalize(x_all @ w, dim=1)
        loss = sum(info_nce(emb[r * B:(r + 1) * B], emb, r * B) for r in range(WS)) / WS
        loss.backward()
        res["ref"] = w.grad.clone()
        torch.save(res, out)
    dist.destroy_process_group()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "res.pt")
        mp.spawn(worker, args=(os.path.join(d, "store"), out), nprocs=WS)
        res = torch.load(out)
    assert torch.allclose(res["fixed"], res["ref"], atol=1e-5)
    assert not torch.allclose(res["buggy"], res["ref"], atol=1e-3)
    print("CONFIRMED")
