"""fresh23 real: tinyzqh/light_mappo algorithms/utils/popart.py:21, 22, 24, 25, 26, 27 (GS516).

PopArt.__init__ does `self.weight = nn.Parameter(torch.Tensor(out, in)).to(**self.tpdv)` (and bias, and the
statistics stddev/mean/mean_sq/debiasing_term with requires_grad=False), tpdv = dict(dtype=float32, device=device).
With `--use_popart` (off by default, config.py:270) R_Critic uses `PopArt(hidden, 1, device=device)` as its value
head `v_out` and the trainer uses it as value normaliser; `device` is `cuda:0` by default whenever CUDA is there
(`--cuda` defaults to True, train/train.py:97-99).

* On CUDA the `.to()` copies: every attribute is a plain tensor, none is registered. weight/bias are non-leaf copies
  of unregistered CPU Parameters, so they are missing from `critic.parameters()`: the critic's optimiser never
  trains the value head (and PopArt.update, under no_grad, later replaces them with graph-less tensors). The
  statistics are missing from `critic.state_dict()`, so `critic.pt` (base_runner.save) lacks them and `restore()`
  reloads a value head whose normaliser is back at zero.
* On the CPU the `.to()` returns the Parameters themselves (registered), but then PopArt.update's
  `self.stddev = (...).sqrt()...` (line 63) assigns a plain tensor to a registered parameter and raises TypeError
  at the first update. Either way `--use_popart` is broken; on CUDA these lines are the cause.

No GPU in this session: the copying move is shown with a dtype change (float64), which copies exactly as a device
change does; the CPU float32 case runs as is.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PopArt(nn.Module):                                  # popart.py:7-66, tpdv made a parameter of the run
    def __init__(self, input_shape, output_shape, tpdv, norm_axes=1, beta=0.99999, epsilon=1e-5):
        super().__init__()
        self.beta, self.epsilon, self.norm_axes, self.tpdv = beta, epsilon, norm_axes, tpdv
        self.weight = nn.Parameter(torch.Tensor(output_shape, input_shape)).to(**self.tpdv)            # 21
        self.bias = nn.Parameter(torch.Tensor(output_shape)).to(**self.tpdv)                          # 22
        self.stddev = nn.Parameter(torch.ones(output_shape), requires_grad=False).to(**self.tpdv)     # 24
        self.mean = nn.Parameter(torch.zeros(output_shape), requires_grad=False).to(**self.tpdv)      # 25
        self.mean_sq = nn.Parameter(torch.zeros(output_shape), requires_grad=False).to(**self.tpdv)   # 26
        self.debiasing_term = nn.Parameter(torch.tensor(0.0), requires_grad=False).to(**self.tpdv)    # 27
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        torch.nn.init.uniform_(self.bias, -0.1, 0.1)

    def forward(self, x):
        return F.linear(x.to(**self.tpdv), self.weight, self.bias)

    @torch.no_grad()
    def update(self, input_vector):
        input_vector = input_vector.to(**self.tpdv)
        old_mean, old_stddev = self.mean, self.stddev
        self.mean.mul_(self.beta).add_(input_vector.mean(0) * (1.0 - self.beta))
        self.mean_sq.mul_(self.beta).add_((input_vector ** 2).mean(0) * (1.0 - self.beta))
        self.debiasing_term.mul_(self.beta).add_(1.0 * (1.0 - self.beta))
        self.stddev = (self.mean_sq - self.mean ** 2).sqrt().clamp(min=1e-4)                          # 63
        self.weight = self.weight * old_stddev / self.stddev
        self.bias = (old_stddev * self.bias + old_mean - self.mean) / self.stddev


class Critic(nn.Module):                                   # R_Critic: base MLP + v_out = PopArt(...)
    def __init__(self, tpdv):
        super().__init__()
        self.base = nn.Linear(6, 16).to(tpdv["dtype"])
        self.v_out = PopArt(16, 1, tpdv)

    def forward(self, x):
        return self.v_out(torch.tanh(self.base(x.to(self.base.weight.dtype))))


# the copying move (stands for device=cuda:0)
critic = Critic(dict(dtype=torch.float64, device="cpu"))
names = [n for n, _ in critic.named_parameters()]
assert names == ["base.weight", "base.bias"], names                       # v_out.weight / v_out.bias missing
assert not any(k.startswith("v_out") for k in critic.state_dict())        # statistics missing from critic.pt
opt = torch.optim.Adam(critic.parameters(), lr=1e-2)
w0 = critic.v_out.weight.detach().clone()
for _ in range(20):
    loss = (critic(torch.randn(32, 6)) - 1.0).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
assert torch.equal(critic.v_out.weight.detach(), w0)                     # the value head never moved
for _ in range(5):
    critic.v_out.update(torch.randn(32, 1))
print("copying move: parameters() =", names, "- state_dict keys:", list(critic.state_dict()),
      "- v_out.weight unchanged by 20 Adam steps")
w_after = critic.v_out.weight
print("v_out.weight requires_grad after update():", w_after.requires_grad, "- never in the optimiser")
sd = critic.state_dict()
restored = Critic(dict(dtype=torch.float64, device="cpu")); restored.load_state_dict(sd)
assert restored.v_out.debiasing_term.item() == 0.0 and critic.v_out.debiasing_term.item() > 0
print("restore from critic.state_dict(): debiasing_term", restored.v_out.debiasing_term.item(),
      "instead of", critic.v_out.debiasing_term.item())

# the CPU float32 case: registered, but update() raises on line 63
critic = Critic(dict(dtype=torch.float32, device="cpu"))
assert "v_out.weight" in dict(critic.named_parameters())
try:
    critic.v_out.update(torch.randn(32, 1))
    raise SystemExit("expected the TypeError of assigning a tensor to a registered parameter")
except TypeError as e:
    print("CPU float32: registered, but update():", str(e)[:80])
