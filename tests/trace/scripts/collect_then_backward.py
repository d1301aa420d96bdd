# expect: nothing (outputs collected in a list, then backpropagated together; numbers logged with .item())
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(6, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
log = {}
for step in range(3):
    outs = []
    for micro in range(6):
        outs.append(model(torch.randn(4, 6)).pow(2).mean())
    loss = torch.stack(outs).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    log[step] = loss.item()
    log["last"] = loss
print("steps:", len(log))
