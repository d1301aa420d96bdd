import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        h = self.fc1(x)
        self.last_hidden = np.clip(h.detach().numpy(), 0.0, None)
        h = torch.clamp(h, min=0.0)
        return self.fc2(h)


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(3, 4)).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
