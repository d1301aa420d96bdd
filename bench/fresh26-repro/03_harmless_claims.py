"""fresh26 harmless: the claim is true, the consequence it names does not happen. Each part uses the real statements.

A. zhuangdizhu/FedGen FLAlgorithms/users/userpFedEnsemble.py:61 (GS404): `update_generator` sums
   `RECONSTRUCT_LOSS += loss` (then `loss.backward()`, step) over `steps` iterations, so the sum keeps every step's
   graph nodes until `.detach().numpy()` at the end: true (run A). But `UserpFedEnsemble` is never imported or
   built: FLAlgorithms/servers/serverpFedEnsemble.py's FedEnsemble makes `UserAVG` users, and the class's
   `super().__init__(dataset, algorithm, numeric_id, ...)` does not even match `User.__init__(self, args, id, model,
   train_data, test_data, use_adam=False)`. Dead code.
B. mmendiet/FedAlign pyhessian/hessian.py:96 (GS405): `dataloader_hv_product` runs `self.model.zero_grad()`,
   `loss.backward(create_graph=True)`, `get_params_grad` (`param.grad + 0.`), `self.model.zero_grad()` right after,
   then `torch.autograd.grad(gradsH, params, grad_outputs=v, retain_graph=False)`. The `.grad` -> graph ->
   parameter cycle exists for two statements: `zero_grad()` (set_to_none) drops the `.grad` tensors and the
   graph dies with the batch (run B: a weak reference to each batch's graph is dead after the next batch).
C. mmendiet/FedAlign pyhessian/hessian.py:77 (GS405): the single-batch `hessian.__init__` runs
   `loss.backward(create_graph=True)` once and keeps `self.gradsH = [p.grad + 0.]`, whose graph the later
   Hessian-vector products (`torch.autograd.grad(gradsH, params, v, retain_graph=True)`) need: one graph per
   hessian object, made once per compute_hessian.py run, kept on purpose; `eigenvalues()` starts with
   `self.model.zero_grad()`, which drops the `.grad` cycle (run C: the graph lives while the object does and dies
   with it; no growth).
D. yinboc/liif models/rcan.py:23 (GS512): `MeanShift.__init__` sets `self.requires_grad = False`, which freezes
   nothing (true), but RCAN.forward has `#x = self.sub_mean(x)` and `#x = self.add_mean(x)` commented out: the two
   MeanShift modules never take part in a forward, get no gradient, and Adam leaves them unchanged (run D). No
   shipped config uses the rcan encoder either (configs use edsr-baseline and rdn).
"""
import gc
import warnings
import weakref
import torch
from torch import nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", message="Using backward")

# A: the running sum keeps each step's nodes (true), in a class nothing builds.
gen = nn.Linear(4, 4)
opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
RECONSTRUCT_LOSS = 0
counts = []
for _ in range(5):
    opt.zero_grad()
    X = torch.randn(8, 4)
    loss = F.mse_loss(gen(X), X)
    RECONSTRUCT_LOSS += loss                                  # userpFedEnsemble.py:61
    loss.backward()
    opt.step()
    n, stack, seen = 0, [RECONSTRUCT_LOSS.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn); stack.extend(f for f, _ in fn.next_functions)
    counts.append(len(seen))
print("A: nodes reachable from RECONSTRUCT_LOSS per step:", counts)
assert counts == sorted(counts) and counts[-1] > counts[0]

class _Sentinel:
    pass


class Mark(torch.autograd.Function):
    """Identity whose graph node holds a sentinel: a weak reference to it tells whether the node is alive."""
    @staticmethod
    def forward(ctx, x):
        ctx.sentinel = _Sentinel()
        Mark.last = weakref.ref(ctx.sentinel)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g


# B: the cycle is cut by the zero_grad() right after the backward.
model = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 3))
params = [p for p in model.parameters()]
v = [torch.randn_like(p) for p in params]
alive = []
for batch in range(4):
    model.zero_grad()
    inputs, targets = torch.randn(5, 6), torch.randint(0, 3, (5,))
    loss = F.cross_entropy(model[2](model[1](Mark.apply(model[0](inputs)))), targets)
    loss.backward(create_graph=True)                          # hessian.py:96
    gradsH = [p.grad + 0. for p in params]
    marker = Mark.last
    model.zero_grad()
    Hv = torch.autograd.grad(gradsH, params, grad_outputs=v, only_inputs=True, retain_graph=False)
    del gradsH, Hv, loss
    gc.collect()
    alive.append(marker() is not None)
print("B: a batch's create_graph graph still alive after the batch:", alive)
assert not any(alive)
assert all(p.grad is None for p in params)
# Control: without the zero_grad() after the backward the graph does stay alive through the .grad cycle.
loss = F.cross_entropy(model[2](model[1](Mark.apply(model[0](torch.randn(5, 6))))), torch.randint(0, 3, (5,)))
loss.backward(create_graph=True)
marker = Mark.last
del loss
gc.collect()
print("B control (no zero_grad): graph alive:", marker() is not None)
assert marker() is not None
model.zero_grad()
gc.collect()
assert marker() is None

# C: one graph per hessian object, needed by the later products, gone with the object.
class Hess:
    def __init__(self, model, inputs, targets):
        loss = F.cross_entropy(model[2](model[1](Mark.apply(model[0](inputs)))), targets)
        loss.backward(create_graph=True)                      # hessian.py:77
        self.params = [p for p in model.parameters()]
        self.gradsH = [p.grad + 0. for p in self.params]
    def hv(self, v):
        return torch.autograd.grad(self.gradsH, self.params, grad_outputs=v, retain_graph=True)
h = Hess(model, torch.randn(5, 6), torch.randint(0, 3, (5,)))
marker = Mark.last
model.zero_grad()                                             # eigenvalues(): self.model.zero_grad()
for _ in range(3):
    h.hv(v)                                                   # the retained graph is what these need
assert marker() is not None
del h
gc.collect()
print("C: graph alive after the hessian object is dropped:", marker() is not None)
assert marker() is None

# D: MeanShift with `self.requires_grad = False`, unused in forward.
class MeanShift(nn.Conv2d):
    def __init__(self, rgb_range, rgb_mean, rgb_std, sign=-1):
        super(MeanShift, self).__init__(3, 3, kernel_size=1)
        std = torch.Tensor(rgb_std)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1)
        self.weight.data.div_(std.view(3, 1, 1, 1))
        self.bias.data = sign * rgb_range * torch.Tensor(rgb_mean)
        self.bias.data.div_(std)
        self.requires_grad = False                            # rcan.py:23

class RCANish(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub_mean = MeanShift(1, (0.4488, 0.4371, 0.4040), (1.0, 1.0, 1.0))
        self.head = nn.Conv2d(3, 8, 3, padding=1)
        self.add_mean = MeanShift(1, (0.4488, 0.4371, 0.4040), (1.0, 1.0, 1.0), 1)
    def forward(self, x):
        #x = self.sub_mean(x)
        x = self.head(x)
        #x = self.add_mean(x)
        return x

net = RCANish()
assert net.sub_mean.weight.requires_grad                     # the claim: nothing is frozen
w0 = net.sub_mean.weight.detach().clone()
opt = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-4)
for _ in range(3):
    opt.zero_grad()
    net(torch.randn(2, 3, 8, 8)).pow(2).mean().backward()
    opt.step()
print("D: MeanShift grad:", net.sub_mean.weight.grad, "| changed:", not torch.equal(w0, net.sub_mean.weight))
assert net.sub_mean.weight.grad is None and torch.equal(w0, net.sub_mean.weight)
