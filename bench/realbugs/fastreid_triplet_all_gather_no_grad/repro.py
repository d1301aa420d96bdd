"""Reproduction for `fastreid_triplet_all_gather_no_grad`: JDAI-CV/fast-reid commit 3d1bae9 ("fix triplet loss backward propagation on multi-gpu training (#82)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: in multi-GPU training the triplet loss used `concat_all_gather(embedding)` (torch.distributed.all_gather
into fresh buffers, which records no autograd history) for both sides of the distance matrix, so the triplet
loss had no gradient path to the local embeddings (silently contributing nothing); the fix gathers through an
autograd Function (GatherLayer) and keeps the local `embedding` on one side.
"""

import os
import tempfile

import torch
import torch.distributed as dist

store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)   # single local process


def concat_all_gather(tensor):
    tensors_gather = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(tensors_gather, tensor, async_op=False)
    return torch.cat(tensors_gather, dim=0)


class GatherLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        output = [torch.zeros_like(input) for _ in range(dist.get_world_size())]
        dist.all_gather(output, input)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads):
        return grads[dist.get_rank()].clone()


torch.manual_seed(0)
net = torch.nn.Linear(6, 4)
embedding = net(torch.randn(8, 6))

buggy_all = concat_all_gather(embedding)
buggy_dist = torch.cdist(buggy_all, buggy_all)             # euclidean_dist(all_embedding, all_embedding)
assert not buggy_dist.requires_grad                         # the triplet loss is cut from the network

fixed_all = torch.cat(GatherLayer.apply(embedding), dim=0)
fixed_dist = torch.cdist(embedding, fixed_all)              # euclidean_dist(embedding, all_embedding)
fixed_dist.sum().backward()
assert net.weight.grad is not None and net.weight.grad.abs().sum() > 0
dist.destroy_process_group()
print("CONFIRMED")
