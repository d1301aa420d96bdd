"""fresh18 after-check: the real-bug case magvit2_discr_stale_gen_grads keeps its GS515 finding at trainer.py:325 but
loses the one at :371 with the GS515 change. The buggy trainer's shape:

    self.optimizer = get_optimizer(model.parameters())             # the whole tokenizer, discriminator included
    self.discr_optimizer = get_optimizer(model.discr_parameters())
    train_step: gen loss backward; self.optimizer.step(); self.optimizer.zero_grad()
                discr loss backward (fakes not detached); self.discr_optimizer.step(); self.discr_optimizer.zero_grad()

:325 is real (the discriminator loss's backward fills the tokenizer's .grad, which self.optimizer steps next time).
:371 claimed the generator backward leaves gradients on the discriminator for discr_optimizer's next step, but
self.optimizer holds the discriminator's parameters too and zeroes them right after its step: the discriminator
step sees only its own loss's gradient. This program checks both.
"""
import torch
import torch.nn as nn


class Tok(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(2, 2)
        self.discr = nn.Linear(2, 1)

    def forward(self, x, return_discr_loss=False):
        fake = self.enc(x)
        if return_discr_loss:
            return self.discr(fake).mean() - self.discr(x).mean()     # fakes not detached (the bug)
        return (fake - x).pow(2).mean() - self.discr(fake).mean()


torch.manual_seed(0)
model = Tok()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
discr_optimizer = torch.optim.SGD(model.discr.parameters(), lr=0.1)
gen_leftover, discr_clean = [], []
for step in range(3):
    x = torch.randn(8, 2)
    loss = model(x)
    own_enc = torch.autograd.grad(loss, model.enc.weight, retain_graph=True)[0]
    loss.backward()
    gen_leftover.append(not torch.allclose(model.enc.weight.grad, own_enc))
    optimizer.step()
    optimizer.zero_grad()
    x = torch.randn(8, 2)
    discr_loss = model(x, return_discr_loss=True)
    own_d = torch.autograd.grad(discr_loss, model.discr.weight, retain_graph=True)[0]
    discr_loss.backward()
    discr_clean.append(torch.allclose(model.discr.weight.grad, own_d))
    discr_optimizer.step()
    discr_optimizer.zero_grad()
print("generator step applies the discriminator loss's leftover (trainer.py:325, real):", gen_leftover)
print("discriminator step sees only its own gradient (trainer.py:371 claim false):", discr_clean)
assert gen_leftover[1:] == [True, True] and all(discr_clean)
