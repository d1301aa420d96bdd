import torch
import torch.nn as nn

torch.manual_seed(0)
lstm = nn.LSTM(2, 4)
opt = torch.optim.Adam(lstm.parameters(), lr=1e-2)
seq = torch.randn(12, 1, 2)
state = (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))
for start in range(0, 12, 4):
    chunk = seq[start:start + 4]
    state = (state[0].detach(), state[1].detach())
    out, state = lstm(chunk, state)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
