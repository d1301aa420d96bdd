# expect: GS911 line 11 (blocks kept in a plain list: not registered, never updated by the optimizer)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [nn.Linear(6, 6) for _ in range(2)]
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.head(x)


model = Tower()
before = model.blocks[0].weight.detach().clone()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    loss = model(torch.randn(4, 6)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("blocks unchanged:", torch.equal(before, model.blocks[0].weight))
