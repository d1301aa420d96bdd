import torch
import torch.nn as nn


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.cls_head = nn.Linear(16, 3)
        self.reg_head = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.reg_head(h)


torch.manual_seed(0)
net = MultiTaskNet()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(4, 8)
logits, value = net(x)
cls_loss = nn.functional.cross_entropy(logits, torch.randint(0, 3, (4,)))
reg_loss = nn.functional.mse_loss(value, torch.randn(4, 1))
opt.zero_grad()
for task_loss in [cls_loss, reg_loss]:
    task_loss.backward()  # root cause: the shared trunk's graph is freed by the first task's backward
opt.step()
