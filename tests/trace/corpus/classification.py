# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/302_classification.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import torch

torch.manual_seed(1)
n_data = torch.ones(50, 2)
x0 = torch.normal(2 * n_data, 1)
y0 = torch.zeros(50)
x1 = torch.normal(-2 * n_data, 1)
y1 = torch.ones(50)
x = torch.cat((x0, x1), 0).float()
y = torch.cat((y0, y1), 0).long()

net = torch.nn.Sequential(torch.nn.Linear(2, 10), torch.nn.ReLU(), torch.nn.Linear(10, 2))
optimizer = torch.optim.SGD(net.parameters(), lr=0.02)
loss_func = torch.nn.CrossEntropyLoss()
for t in range(5):
    out = net(x)
    loss = loss_func(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    prediction = torch.max(out, 1)[1]
    accuracy = float((prediction == y).sum()) / float(y.size(0))
print("accuracy %.2f" % accuracy)
