# expect: GS910 line 14 (the optimizer used up the generator, so clip_grad_norm_ clips nothing)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(5, 1)
params = model.parameters()
opt = torch.optim.SGD(params, lr=0.1)
for step in range(2):
    x = torch.randn(8, 5)
    loss = model(x).pow(2).mean() * 100
    opt.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(params, 0.1)
    opt.step()
print("norm:", float(norm))
