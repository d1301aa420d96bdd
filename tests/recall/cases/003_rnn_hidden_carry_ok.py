import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.RNN(3, 5, batch_first=True)
head = nn.Linear(5, 1)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
hidden = torch.zeros(1, 2, 5)
for step in range(3):
    x = torch.randn(2, 4, 3)
    out, hidden = rnn(x, hidden.detach())
    loss = head(out[:, -1]).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
