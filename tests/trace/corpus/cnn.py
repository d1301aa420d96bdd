# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/401_CNN.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import torch
import torch.nn as nn

torch.manual_seed(1)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(1, 4, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2))
        self.conv2 = nn.Sequential(nn.Conv2d(4, 8, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2))
        self.out = nn.Linear(8 * 3 * 3, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        x = x.view(x.size(0), -1)
        output = self.out(x)
        return output, x


cnn = CNN()
optimizer = torch.optim.Adam(cnn.parameters(), lr=1e-3)
loss_func = nn.CrossEntropyLoss()
images = torch.randn(40, 1, 12, 12)
labels = torch.randint(0, 10, (40,))
for step in range(4):
    b_x = images[step * 10:(step + 1) * 10]
    b_y = labels[step * 10:(step + 1) * 10]
    output = cnn(b_x)[0]
    loss = loss_func(output, b_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
test_output, _ = cnn(images[:10])
pred_y = torch.max(test_output, 1)[1].numpy()
print("predictions", pred_y)
