# expect: GS913 line 12 (the L1 penalty is a Python number: it changes the loss, not the gradient)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(5, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x, y = torch.randn(8, 5), torch.randn(8, 1)
    fit = F.mse_loss(model(x), y)
    l1 = model.weight.abs().sum().item()
    loss = fit + 0.01 * l1
    opt.zero_grad()
    loss.backward()
    ref = torch.autograd.grad(F.mse_loss(model(x), y), model.weight)[0]
    print("same gradient as without the penalty:", torch.allclose(model.weight.grad, ref))
    opt.step()
