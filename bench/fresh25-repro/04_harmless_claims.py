"""fresh25 harmless: the claims are true, the consequence the finding names does not happen.

A. johnjim0816/rl-tutorials joyrl/algos/GAIL/agent.py:146 (GS405, "`backward(create_graph=True)` leaks memory
   through a reference cycle"). `adversarial_update` loops over expert/policy batches: `discriminator_optimiser.
   zero_grad()`, `autograd.backward(expert_loss, create_graph=True)`, `r1_reg += param.grad.norm()` over the
   discriminator's parameters, `(policy_loss + cfg.r1_reg_coeff * r1_reg).backward()`, `discriminator_optimiser.
   step()`. The `.grad` of each parameter does reference the graph that made it (the cycle is real), but the next
   batch's `zero_grad()` (RMSprop; set_to_none=True) drops those `.grad` tensors, and the graph goes with them: at
   any time only the last batch's graph is held, nothing accumulates over the run.
B. zhangxiann/PyTorch_Practice lesson1/computational_graph.py:19 and lesson5/hook_methods.py:33 (GS502 x3 each,
   "`a` is not a leaf ..., so its `.grad` is None after backward"). True: the lesson prints
   `w.grad, x.grad, a.grad, b.grad, y.grad` after `y.backward()` to show that only the leaves get `.grad` (the line
   before prints `is_leaf` of each, and line 7 carries the hint `# retain_grad()`); the values go only to print().
   hook_methods.py's block sits under `flag = 0` / `if flag:` and does not run at all.
C. gidariss/FeatureLearningRotNet dataloader.py:312 (GS002, "`data` no longer names the module, so `data.` at line
   316 uses the assigned value instead"). True, and meant: in the `if __name__ == '__main__':` demo, `data, label =
   b` takes a batch and `data.size(0)` (and `data[i]`) reads that batch; `torch.utils.data` has no `size`, and the
   module's only uses (`data.Dataset` as base classes) ran when the classes were defined.
"""
import gc
import warnings
import weakref

import torch
import torch.nn as nn
import torch.utils.data as data
from torch import autograd, optim
from torch.nn import functional as F

torch.manual_seed(0)
warnings.simplefilter("ignore")

# ---- A: GAIL R1 penalty through .grad, with zero_grad() every batch -------------------------------------------


class GAILDiscriminator(nn.Module):                                     # GAIL/gail_models.py
    def __init__(self, n_in, hidden_dim):
        super().__init__()
        self.discriminator = nn.Sequential(nn.Linear(n_in, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, hidden_dim),
                                           nn.Tanh(), nn.Linear(hidden_dim, 1), nn.Sigmoid())

    def forward(self, x):
        return self.discriminator(x).squeeze(dim=1)


class Mark(torch.autograd.Function):                                    # an identity whose graph node can be watched
    @staticmethod
    def forward(ctx, t):
        return t.clone()

    @staticmethod
    def backward(ctx, g):
        return g


disc = GAILDiscriminator(6, 16)
opt = optim.RMSprop(disc.parameters(), lr=1e-3)
nodes = []                                                              # nodes[i]: a weak ref to a node of batch i's graph
r1_reg_coeff = 1.0
for batch in range(8):
    expert, policy = torch.randn(8, 6), torch.randn(8, 6)
    d_expert, d_policy = disc(expert), disc(policy)
    d_expert = Mark.apply(d_expert)
    nodes.append(weakref.ref(d_expert.grad_fn))
    opt.zero_grad()
    expert_loss = F.binary_cross_entropy(d_expert, torch.ones_like(d_expert))
    autograd.backward(expert_loss, create_graph=True)                    # agent.py:146
    r1_reg = 0
    for param in disc.parameters():
        r1_reg += param.grad.norm()
    policy_loss = F.binary_cross_entropy(d_policy, torch.zeros_like(d_policy))
    (policy_loss + r1_reg_coeff * r1_reg).backward()
    opt.step()
    del expert, policy, d_expert, d_policy, expert_loss, r1_reg, policy_loss, param
    gc.collect()
    alive = [r() is not None for r in nodes]
    assert not any(alive[:-1]), alive                                   # earlier batches' graphs are gone
    assert alive[-1]                                                    # the last one is held: the cycle via .grad
    assert all(p.grad.grad_fn is not None for p in disc.parameters())
print("A: graph alive per batch after batch 8:", alive)
opt.zero_grad()
gc.collect()
assert nodes[-1]() is None
print("A: after the next zero_grad() the last batch's graph is gone too: no growth over the run")

# ---- B: the lesson's print of non-leaf .grad ---------------------------------------------------------------------
w = torch.tensor([1.], requires_grad=True)
x = torch.tensor([2.], requires_grad=True)
a = torch.add(w, x)     # retain_grad()
b = torch.add(w, 1)
y = torch.mul(a, b)
y.backward()
print("B: is_leaf:", w.is_leaf, x.is_leaf, a.is_leaf, b.is_leaf, y.is_leaf)
print("B: gradient:", w.grad, x.grad, a.grad, b.grad, y.grad)           # computational_graph.py:19
assert a.grad is None and b.grad is None and y.grad is None and w.grad.item() == 5.0
flag = 0
ran = False
if flag:
    ran = True                                                          # hook_methods.py:12-37
assert not ran

# ---- C: the __main__ demo's `data, label = b` -------------------------------------------------------------------


class GenericDataset(data.Dataset):                                     # dataloader.py:75, the module used here
    def __getitem__(self, i):
        return torch.rand(3, 8, 8), i % 4

    def __len__(self):
        return 8


assert not hasattr(data, "size")                                       # the module has no `size`: meant the batch
for b in torch.utils.data.DataLoader(GenericDataset(), batch_size=8):
    data, label = b                                                     # dataloader.py:312
    break
shown = [data[i].shape for i in range(data.size(0))]                    # dataloader.py:316-318
print("C: data.size(0) =", data.size(0), "images shown:", len(shown))
assert data.size(0) == 8 and len(shown) == 8
