# expect: nothing (registered blocks; a frozen teacher kept in a plain list is not trained on purpose)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Student(nn.Module):
    def __init__(self, teacher):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(6, 6) for _ in range(2)])
        self.head = nn.Linear(6, 1)
        self.helpers = [teacher]  # kept out of parameters() on purpose: the teacher never trains

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.head(x)


teacher = nn.Linear(6, 1).requires_grad_(False)
model = Student(teacher)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x = torch.randn(4, 6)
    loss = (model(x) - model.helpers[0](x)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
