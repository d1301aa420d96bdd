"""fresh20 (real): GS350 hendrycks/pre-training `robustness/adversarial/attacks.py:55` (PGD_linf.forward), called by
tune.py:139, train_imagenet.py:124 and test.py:128 with the clean batch `bx`.

`adv_bx = bx.detach(); adv_bx += uniform(-eps, eps)` writes the random start into the caller's `bx` (detach shares
storage); the projection `torch.min(torch.max(adv_bx, bx - eps), bx + eps)` then centres on the shifted `bx`, so
the final perturbation from the clean images reaches about 2*eps instead of eps (the same code as hendrycks/ss-ood,
judged real in the unknown4 round). The same write in PGDTarget.forward (line 87) has no caller (harmless).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PGD_linf(nn.Module):           # the repository's class, verbatim but for `.cuda()`
    def __init__(self, epsilon, num_steps, step_size):
        super().__init__()
        self.epsilon = epsilon
        self.num_steps = num_steps
        self.step_size = step_size

    def forward(self, model, bx, by):
        adv_bx = bx.detach()
        adv_bx += torch.zeros_like(adv_bx).uniform_(-self.epsilon, self.epsilon)
        for _ in range(self.num_steps):
            adv_bx.requires_grad_()
            with torch.enable_grad():
                logits = model(adv_bx * 2 - 1)
                loss = F.cross_entropy(logits, by, reduction='sum')
            grad = torch.autograd.grad(loss, adv_bx, only_inputs=True)[0]
            adv_bx = adv_bx.detach() + self.step_size * torch.sign(grad.detach())
            adv_bx = torch.min(torch.max(adv_bx, bx - self.epsilon), bx + self.epsilon).clamp(0, 1)
        return adv_bx


torch.manual_seed(0)
net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
bx = torch.rand(16, 3, 8, 8) * 0.5 + 0.25
by = torch.randint(0, 10, (16,))
clean = bx.clone()
adv = PGD_linf(epsilon=8. / 255, num_steps=10, step_size=2. / 255)(net, bx, by)
print("caller's bx changed by the attack:", (bx - clean).abs().max().item())
print("max |adv - clean| =", (adv - clean).abs().max().item(), "for eps =", 8. / 255)
assert not torch.equal(bx, clean)
assert (adv - clean).abs().max().item() > 8. / 255 * 1.5
