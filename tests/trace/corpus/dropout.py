# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/503_dropout.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import torch
import torch.nn as nn

torch.manual_seed(1)
N_SAMPLES = 20
N_HIDDEN = 32
x = torch.unsqueeze(torch.linspace(-1, 1, N_SAMPLES), 1)
y = x + 0.3 * torch.normal(torch.zeros(N_SAMPLES, 1), torch.ones(N_SAMPLES, 1))
test_x = torch.unsqueeze(torch.linspace(-1, 1, N_SAMPLES), 1)
test_y = test_x + 0.3 * torch.normal(torch.zeros(N_SAMPLES, 1), torch.ones(N_SAMPLES, 1))

net_overfitting = nn.Sequential(nn.Linear(1, N_HIDDEN), nn.ReLU(), nn.Linear(N_HIDDEN, N_HIDDEN), nn.ReLU(),
                                nn.Linear(N_HIDDEN, 1))
net_dropped = nn.Sequential(nn.Linear(1, N_HIDDEN), nn.Dropout(0.5), nn.ReLU(), nn.Linear(N_HIDDEN, N_HIDDEN),
                            nn.Dropout(0.5), nn.ReLU(), nn.Linear(N_HIDDEN, 1))
optimizer_ofit = torch.optim.Adam(net_overfitting.parameters(), lr=0.01)
optimizer_drop = torch.optim.Adam(net_dropped.parameters(), lr=0.01)
loss_func = nn.MSELoss()
for t in range(5):
    pred_ofit = net_overfitting(x)
    pred_drop = net_dropped(x)
    loss_ofit = loss_func(pred_ofit, y)
    loss_drop = loss_func(pred_drop, y)
    optimizer_ofit.zero_grad()
    optimizer_drop.zero_grad()
    loss_ofit.backward()
    loss_drop.backward()
    optimizer_ofit.step()
    optimizer_drop.step()
    if t % 2 == 0:
        net_overfitting.eval()
        net_dropped.eval()
        test_pred_ofit = net_overfitting(test_x)
        test_pred_drop = net_dropped(test_x)
        test_loss = loss_func(test_pred_ofit, test_y).item() + loss_func(test_pred_drop, test_y).item()
        print("test loss %.3f" % test_loss)
        net_overfitting.train()
        net_dropped.train()
