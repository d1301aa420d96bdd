"""Reproduction for `lightly_densecl_momentum_keys_grad`: lightly-ai/lightly commit b8fb34cc ("Add torch.no_grad").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the DenseCL example's `forward_momentum` runs the (online) backbone and heads with gradient
recording on, so the key embeddings carry a graph and the contrastive loss also back-propagates
through the key branch, which MoCo/DenseCL keys must not do (stop-gradient); the fix decorates
`forward_momentum` with `@torch.no_grad()`.
"""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
        if fixed:
            self.forward_momentum = torch.no_grad()(self.forward_momentum)

    def forward(self, x):
        return self.head(self.backbone(x))

    def forward_momentum(self, x):                # buggy: no @torch.no_grad()
        return self.head(self.backbone(x))


def info_nce(q, k):
    q, k = nn.functional.normalize(q, dim=1), nn.functional.normalize(k, dim=1)
    return nn.functional.cross_entropy(q @ k.T / 0.1, torch.arange(len(q)))


def run(fixed):
    torch.manual_seed(0)
    model = Model(fixed)
    xq, xk = torch.randn(6, 4), torch.randn(6, 4)
    query = model(xq)
    key = model.forward_momentum(xk)
    info_nce(query, key).backward()
    # the gradient the query side alone gives (keys as constants)
    torch.manual_seed(0)
    ref = Model(True)
    info_nce(ref(xq), ref(xk).detach()).backward()
    return key.requires_grad, torch.allclose(model.backbone.weight.grad, ref.backbone.weight.grad)


key_has_graph, same = run(False)
assert key_has_graph and not same          # buggy: the key branch adds its own gradient
key_has_graph, same = run(True)
assert not key_has_graph and same          # fixed: stop-gradient on the keys

print("CONFIRMED")
