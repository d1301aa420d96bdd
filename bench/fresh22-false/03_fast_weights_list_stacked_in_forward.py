"""fresh22 false: thunlp/FewRel models/metanet.py:182, 183 (GS404).

MetaNet.forward: `for i in range(N): for j in range(K):` `loss.backward(retain_graph=True)` on one support
example, then `basic_fast_conv_params.append(self.learner_basic(grad_conv, ...))` (and the fc one); after the loop
`torch.stack(...)` builds the fast weights that the query branch of the same forward uses for the returned
logits. The lists are locals of forward, bounded by N*K (the episode's support size), and they are the input of the
result; the trainer backwards a loss of those logits once per episode. Run below: the returned logits' gradient
reaches the learner through the stacked list, and nothing outlives the episode.
"""
import weakref

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class MetaNet(nn.Module):
    def __init__(self, d=8, N=3):
        super().__init__()
        self.enc, self.fc = nn.Linear(d, d), nn.Linear(d, N, bias=False)
        self.learner = nn.Linear(1, 1)       # LearnerForBasic's role: grad -> fast weight
        self.N = N

    def forward(self, support, query, N, K):
        logits = self.fc(self.enc(support))              # (N*K, N)
        fast = []
        for i in range(N):
            for j in range(K):
                self.zero_grad()
                loss = F.cross_entropy(logits[i * K + j:i * K + j + 1], torch.tensor([i]))
                loss.backward(retain_graph=True)
                fast.append(self.learner(self.fc.weight.grad.reshape(-1, 1)).reshape(-1))   # metanet.py:182-183
        fast = torch.stack(fast, 0).mean(0).view_as(self.fc.weight)
        q = self.enc(query)
        return self.fc(q) + F.linear(q, fast)


net = MetaNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
refs = []
for episode in range(3):
    out = net(torch.randn(6, 8), torch.randn(4, 8), 3, 2)
    refs.append(weakref.ref(out))
    loss = F.cross_entropy(out, torch.randint(0, 3, (4,)))
    opt.zero_grad()
    loss.backward()
    assert net.learner.weight.grad is not None and net.learner.weight.grad.abs().sum() > 0
    opt.step()
del out, loss
alive = [r() is not None for r in refs]
print("learner receives gradient through the stacked fast weights; episode outputs alive:", alive)
assert alive == [False, False, False]
