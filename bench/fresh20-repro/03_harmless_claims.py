"""fresh20 (harmless): the true claims with no consequence in their code.

* GS303 keonlee9420/Comprehensive-Transformer-TTS `model/transformers/transformer_fs2.py:431`: `q, k, v =
  self._in_proj(query).chunk(3, dim=-1)` then `q *= self.scaling` raises under grad mode (checked below), but
  `forward` returns earlier through `F.multi_head_attention_forward` whenever `enable_torch_version` (true: the
  function exists in every torch this code runs on) and no `incremental_state`/`static_kv`/`reset_attn_weight` is
  given, and the only caller (EncSALayer) passes none of them.
* GS203 wzekai99/DM-Improves-AT (3): `Variable(x_natural + delta, requires_grad=False)` is `detach()` (checked
  below): the adversarial example is meant to be a constant input of the training step.
* GS404 hendrycks/pre-training `uncertainty/utils/calibration_tools.py:80`: `t_guess = t_guess * 0 + c` chains two
  nodes per bisection step, bounded by ceil(log2((5.0 - 0.2) / 1e-4)) = 16 steps per call, one call per script.
"""
import math

import torch
import torch.nn.functional as F
from torch.autograd import Variable

w = torch.randn(12, 4, requires_grad=True)
q, k, v = F.linear(torch.randn(5, 2, 4), w).chunk(3, dim=-1)
try:
    q *= 0.5
    raise SystemExit("expected a RuntimeError")
except RuntimeError as e:
    print("slow path would raise:", str(e).split(".")[0])
assert hasattr(F, "multi_head_attention_forward")

delta = torch.zeros(2, 3, requires_grad=True)
x_natural = torch.rand(2, 3)
x_adv = Variable(x_natural + delta, requires_grad=False)
assert not x_adv.requires_grad and x_adv.grad_fn is None and torch.equal(x_adv, (x_natural + delta).detach())
print("Variable(..., requires_grad=False) is a detached copy, as intended")

lower, upper, eps, steps = 0.2, 5.0, 1e-4, 0
t_guess = torch.FloatTensor([0.5 * (lower + upper)]).requires_grad_()
logits, labels = torch.randn(50, 10), torch.randint(0, 10, (50,))
while upper - lower > eps:
    if torch.autograd.grad(F.cross_entropy(logits / t_guess, labels), t_guess)[0] > 0:
        upper = 0.5 * (lower + upper)
    else:
        lower = 0.5 * (lower + upper)
    t_guess = t_guess * 0 + 0.5 * (lower + upper)
    steps += 1
print("tune_temp bisection steps:", steps)
assert steps == math.ceil(math.log2(4.8 / 1e-4))
