"""fresh16 (real): GS301 NeuralBabyTalk `misc/model.py:428, 429`, Deep-RL-Hands-On `Chapter22/lib/i2a.py:71`,
GS370 PytorchSSD `layers/modules/l2norm.py:21`.

* NeuralBabyTalk `_sample` with `sample_max=0` (the self-critical path `forward(..., opt='RL')` backwards its
  log-probs through `RewardCriterion`): `it_bn = torch.multinomial(prob, 1)`, `slp_bn = bn_logprob.gather(1,
  Variable(it_bn))`, then `it_bn[roi_mask] = 0`: gather saved its index, so the loss's backward raises.
* i2a `EnvironmentModel.forward`: `c2_out = self.conv2(c1_out)` (ends in `nn.ReLU()`, which saves its output),
  then `c2_out += c1_out`: backward raises (02_imag.py trains it).
* PytorchSSD `L2Norm.forward`: `norm = x.pow(2).sum(1, keepdim=True).sqrt() + eps; x /= norm` where `x` is the
  output of the VGG's `nn.ReLU(inplace=True)` (RefineSSD_vgg's `s = self.L2Norm_4_3(x)`): backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


def babytalk():
    logits = torch.randn(3, 5, requires_grad=True)
    bn_logprob = F.log_softmax(logits, dim=1)
    it_bn = torch.multinomial(torch.exp(bn_logprob.data), 1)
    slp_bn = bn_logprob.gather(1, Variable(it_bn))
    roi_mask = torch.tensor([True, False, True])
    it_bn[roi_mask] = 0
    (-slp_bn.view(-1) * torch.ones(3)).sum().backward()


def i2a():
    conv1 = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU())
    conv2 = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
    c1_out = conv1(torch.randn(1, 2, 6, 6))
    c2_out = conv2(c1_out)
    c2_out += c1_out
    c2_out.sum().backward()


class L2Norm(nn.Module):  # layers/modules/l2norm.py
    def __init__(self, n, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.full((n,), float(scale)))
        self.eps = 1e-10

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x /= norm
        return self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x


def ssd():
    base = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True))
    x = base(torch.randn(1, 3, 6, 6))
    s = L2Norm(4, 10)(x)
    s.sum().backward()


for f in (babytalk, i2a, ssd):
    try:
        f()
        print(f.__name__, "no error")
    except RuntimeError as e:
        print(f.__name__, "raises:", str(e).split("\n")[0][:110])
