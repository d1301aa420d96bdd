# fresh12 GS214, real (DonkeyShot21/cassle cassle/losses/barlow.py:33): run with 2 gloo ranks on CPU, the gradient DDP ends
# with is exactly 1/world_size of the loss's gradient (ratio 0.5, cosine 1.0 against the differentiable all_reduce).
# cassle/losses/barlow.py: dist.all_reduce(corr) on a tensor with a graph; compare the gradient with the
# differentiable all_reduce (torch.distributed.nn.functional.all_reduce), 2 CPU ranks on gloo.
import os, torch, torch.distributed as dist, torch.multiprocessing as mp
import torch.distributed.nn.functional as dnf

def loss_fn(z1, z2, reduce, lamb=5e-3):
    N, D = z1.size()
    bn = torch.nn.BatchNorm1d(D, affine=False)
    z1, z2 = bn(z1), bn(z2)
    corr = torch.einsum("bi, bj -> ij", z1, z2) / N
    if reduce == "plain":
        dist.all_reduce(corr)
    else:
        corr = dnf.all_reduce(corr)
    corr /= dist.get_world_size()
    diag = torch.eye(D)
    cdif = (corr - diag).pow(2)
    cdif[~diag.bool()] *= lamb
    return cdif.sum()

def run(rank):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    w = torch.randn(8, 4, requires_grad=True)          # the same weights on both ranks (as DDP keeps them)
    torch.manual_seed(1 + rank)
    x1, x2 = torch.randn(16, 8), torch.randn(16, 8)    # each rank's own batch
    out = {}
    for mode in ("plain", "differentiable"):
        w.grad = None
        loss_fn(x1 @ w, x2 @ w, mode).backward()
        g = w.grad.clone(); dist.all_reduce(g); g /= 2   # DDP averages the gradients
        out[mode] = g
    if rank == 0:
        print("ratio plain/differentiable:", (out["plain"].norm() / out["differentiable"].norm()).item(),
              "cos:", torch.nn.functional.cosine_similarity(out["plain"].flatten(), out["differentiable"].flatten(), 0).item())
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(run, nprocs=2)
