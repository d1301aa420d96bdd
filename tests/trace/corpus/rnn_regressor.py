# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/403_RNN_regressor.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import math

import torch
import torch.nn as nn

torch.manual_seed(1)
TIME_STEP = 10


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(input_size=1, hidden_size=16, num_layers=1, batch_first=True)
        self.out = nn.Linear(16, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)
        outs = self.out(r_out)
        return outs, h_state


rnn = RNN()
optimizer = torch.optim.Adam(rnn.parameters(), lr=0.02)
loss_func = nn.MSELoss()
h_state = None
for step in range(5):
    start, end = step * math.pi, (step + 1) * math.pi
    steps = torch.linspace(start, end, TIME_STEP)
    x = torch.sin(steps).view(1, TIME_STEP, 1)
    y = torch.cos(steps).view(1, TIME_STEP, 1)
    prediction, h_state = rnn(x, h_state)
    h_state = h_state.detach()
    loss = loss_func(prediction, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("last loss %.4f" % loss.item())
