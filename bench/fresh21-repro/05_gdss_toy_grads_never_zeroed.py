"""fresh21 real: harryjo97/GDSS toy/toy_main.py:55 (GS503).

`Trainer.train` of the toy experiment: each epoch `loss1.backward(); loss2.backward(); clip_grad_norm_(...);
optimizer1.step(); optimizer2.step()` and no `zero_grad()` anywhere under toy/ (the main trainer.py zeroes at lines
59-60). Each step therefore uses the sum of every gradient since training began. The same statements with two small
score networks: the gradient before each step equals the previous one plus the new batch's own gradient.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model1, model2 = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2)), nn.Linear(2, 2)
optimizer1 = torch.optim.Adam(model1.parameters(), lr=1e-3, weight_decay=0.0001)
optimizer2 = torch.optim.Adam(model2.parameters(), lr=1e-3, weight_decay=0.0001)


def loss_fn(m1, m2, x):
    return (m1(x) - x).pow(2).mean(), (m2(x) + x).pow(2).mean()


prev = None
for epoch in range(4):
    x = torch.randn(64, 2)
    # the batch's own gradient, computed on a copy
    own = torch.autograd.grad(loss_fn(model1, model2, x)[0], model1[0].weight)[0]
    loss1, loss2 = loss_fn(model1, model2, x)
    loss1.backward()
    loss2.backward()
    g = model1[0].weight.grad.clone()
    if prev is not None:
        assert torch.allclose(g, prev + own, atol=1e-6), epoch
        print(f"epoch {epoch}: grad = previous grad + this batch's grad (norm {g.norm():.4f} vs own {own.norm():.4f})")
    prev = g
    torch.nn.utils.clip_grad_norm_(model1.parameters(), 1.0)   # clipping rescales .grad in place
    prev = model1[0].weight.grad.clone()
    torch.nn.utils.clip_grad_norm_(model2.parameters(), 1.0)
    optimizer1.step()
    optimizer2.step()
print("OK: gradients accumulate across epochs")
