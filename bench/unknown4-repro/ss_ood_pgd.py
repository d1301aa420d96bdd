"""hendrycks/ss-ood adversarial/attacks.py PGD.forward (its statements, a stand-in model): GS350 at line 56 is real.
Run: python bench/unknown4-repro/ss_ood_pgd.py -> the caller's bx is changed and the perturbation exceeds eps."""
import torch, torch.nn as nn, torch.nn.functional as F
class PGD(nn.Module):
    def __init__(self, epsilon, num_steps, step_size):
        super().__init__(); self.epsilon=epsilon; self.num_steps=num_steps; self.step_size=step_size
    def forward(self, model, bx, by):
        adv_bx = bx.detach()
        adv_bx += torch.zeros_like(adv_bx).uniform_(-self.epsilon, self.epsilon)
        for i in range(self.num_steps):
            adv_bx.requires_grad_()
            with torch.enable_grad():
                loss = F.cross_entropy(model(adv_bx * 2 - 1), by, reduction='sum')
            grad = torch.autograd.grad(loss, adv_bx, only_inputs=True)[0]
            adv_bx = adv_bx.detach() + self.step_size * torch.sign(grad.detach())
            adv_bx = torch.min(torch.max(adv_bx, bx - self.epsilon), bx + self.epsilon).clamp(0, 1)
        return adv_bx
torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(12, 3))
bx = torch.rand(4, 12); orig = bx.clone(); by = torch.randint(0, 3, (4,))
adv = PGD(8/255, 10, 2/255)(model, bx, by)
print("caller's bx changed:", not torch.equal(bx, orig), "max |adv-orig|:", (adv - orig).abs().max().item(), "eps:", 8/255)
