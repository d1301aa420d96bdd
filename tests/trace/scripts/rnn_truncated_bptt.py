# expect: clean (hidden state detached between chunks)
import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRU(input_size=4, hidden_size=8, batch_first=True)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
hidden = torch.zeros(1, 2, 8)
total = 0.0
for step in range(3):
    out, hidden = rnn(torch.randn(2, 5, 4), hidden)
    hidden = hidden.detach()
    loss = nn.functional.mse_loss(head(out), torch.randn(2, 5, 1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total += loss.item()
