# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/402_RNN_classifier.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import torch
import torch.nn as nn

torch.manual_seed(1)
TIME_STEP = 7
INPUT_SIZE = 5


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=INPUT_SIZE, hidden_size=16, num_layers=1, batch_first=True)
        self.out = nn.Linear(16, 10)

    def forward(self, x):
        r_out, (h_n, h_c) = self.rnn(x, None)
        out = self.out(r_out[:, -1, :])
        return out


rnn = RNN()
optimizer = torch.optim.Adam(rnn.parameters(), lr=0.01)
loss_func = nn.CrossEntropyLoss()
data = torch.randn(32, TIME_STEP, INPUT_SIZE)
target = torch.randint(0, 10, (32,))
for step in range(4):
    b_x = data[step * 8:(step + 1) * 8]
    b_y = target[step * 8:(step + 1) * 8]
    output = rnn(b_x)
    loss = loss_func(output, b_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 2 == 0:
        accuracy = (output.argmax(1) == b_y).float().mean().item()
        print("step", step, "accuracy %.2f" % accuracy)
