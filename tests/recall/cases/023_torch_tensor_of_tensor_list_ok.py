import torch
import torch.nn as nn

torch.manual_seed(0)
experts = nn.ModuleList([nn.Linear(3, 1) for _ in range(3)])
main = nn.Linear(3, 1)
params = list(main.parameters()) + list(experts.parameters())
opt = torch.optim.SGD(params, lr=0.1)
x = torch.randn(4, 3)
balance = [e(x).pow(2).mean() for e in experts]
balance_loss = torch.stack(balance).sum()
loss = main(x).pow(2).mean() + 0.1 * balance_loss
opt.zero_grad()
loss.backward()
opt.step()
