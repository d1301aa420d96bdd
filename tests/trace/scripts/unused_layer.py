# expect: GS904 information line 21 (model.fc2 is in the optimizer but never used in forward)
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.relu(self.fc1(x)))


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    opt.zero_grad()
    model(torch.randn(2, 4)).pow(2).mean().backward()
    opt.step()
