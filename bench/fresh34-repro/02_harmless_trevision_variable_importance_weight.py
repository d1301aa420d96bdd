"""fresh34 harmless: GS203 xiaoboxia/T-Revision loss.py:25 (`beta = Variable(beta, requires_grad=True)`).

`reweight_loss.forward` (verbatim below) computes the importance weight beta = p(y|x) / p(noisy y|x) from the
network output and wraps it in `Variable(beta, requires_grad=True)`. The claim is true: under torch >= 0.4 that
makes a new leaf that shares beta's storage but has no history, so no gradient reaches `out` through beta
(checked below). It is the importance-reweighting method as published (the weight is a per-sample constant
multiplying the cross-entropy; the revision loss in the same file, which must learn `correction` through beta,
does not wrap it), the same on-purpose stop-gradient the project classed as harmless before (fresh rounds:
ACER's importance weight in zhangchuheng123/Reinforcement-Implementation). The only waste: beta.grad is filled.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class reweight_loss(nn.Module):
    def __init__(self):
        super(reweight_loss, self).__init__()

    def forward(self, out, T, target):
        loss = 0.
        out_softmax = F.softmax(out, dim=1)
        for i in range(len(target)):
            temp_softmax = out_softmax[i]
            temp = out[i]
            temp = torch.unsqueeze(temp, 0)
            temp_softmax = torch.unsqueeze(temp_softmax, 0)
            temp_target = target[i]
            temp_target = torch.unsqueeze(temp_target, 0)
            pro1 = temp_softmax[:, target[i]]
            out_T = torch.matmul(T.t(), temp_softmax.t())
            out_T = out_T.t()
            pro2 = out_T[:, target[i]]
            beta = pro1 / pro2
            beta = Variable(beta, requires_grad=True)
            cross_loss = F.cross_entropy(temp, temp_target)
            _loss = beta * cross_loss
            loss += _loss
        return loss / len(target)


torch.manual_seed(0)
T = torch.full((3, 3), 0.1) + 0.7 * torch.eye(3)
target = torch.tensor([0, 2, 1, 1])
out = torch.randn(4, 3, requires_grad=True)
reweight_loss()(out, T, target).sum().backward()
g_shipped = out.grad.clone()

# the same loss with the weights taken as constants explicitly (beta.detach()): identical gradient
out.grad = None
sm = F.softmax(out, 1)
beta = (sm.gather(1, target[:, None]) / (sm @ T).gather(1, target[:, None])).squeeze(1).detach()
(beta * F.cross_entropy(out, target, reduction='none')).mean().backward()
assert torch.allclose(g_shipped, out.grad, atol=1e-6)

# and without the wrap (gradient through beta too): different, so the claim "no gradient flows back" is true
out.grad = None
sm = F.softmax(out, 1)
beta = (sm.gather(1, target[:, None]) / (sm @ T).gather(1, target[:, None])).squeeze(1)
(beta * F.cross_entropy(out, target, reduction='none')).mean().backward()
assert not torch.allclose(g_shipped, out.grad, atol=1e-6)
print("harmless: Variable(beta) is a stop-gradient; the shipped gradient equals the constant-weight one")
