# Modelled on MorvanZhou/PyTorch-Tutorial, tutorial-contents/504_batch_normalization.py (MIT License, Copyright (c) 2017 Morvan Zhou).
# Written anew for gradsight's trace tests after the shape of that example (not copied): random data instead of
# datasets, tiny sizes, a few steps, no plotting, so that it runs offline in about a second.
import torch
import torch.nn as nn

torch.manual_seed(1)
N_SAMPLES = 60
BATCH_SIZE = 20
N_HIDDEN = 4
LR = 0.03
B_INIT = -0.2
train_x = torch.linspace(-7, 10, N_SAMPLES).unsqueeze(1)
train_y = train_x.pow(2) - 5 + torch.randn(N_SAMPLES, 1) * 2


class Net(nn.Module):
    def __init__(self, batch_normalization=False):
        super().__init__()
        self.do_bn = batch_normalization
        self.fcs = []
        self.bns = []
        self.bn_input = nn.BatchNorm1d(1, momentum=0.5)
        for i in range(N_HIDDEN):
            input_size = 1 if i == 0 else 10
            fc = nn.Linear(input_size, 10)
            setattr(self, "fc%i" % i, fc)
            self._set_init(fc)
            self.fcs.append(fc)
            if self.do_bn:
                bn = nn.BatchNorm1d(10, momentum=0.5)
                setattr(self, "bn%i" % i, bn)
                self.bns.append(bn)
        self.predict = nn.Linear(10, 1)
        self._set_init(self.predict)

    def _set_init(self, layer):
        nn.init.normal_(layer.weight, mean=0., std=.1)
        nn.init.constant_(layer.bias, B_INIT)

    def forward(self, x):
        pre_activation = [x]
        if self.do_bn:
            x = self.bn_input(x)
        layer_input = [x]
        for i in range(N_HIDDEN):
            x = self.fcs[i](x)
            pre_activation.append(x)
            if self.do_bn:
                x = self.bns[i](x)
            x = torch.tanh(x)
            layer_input.append(x)
        out = self.predict(x)
        return out, layer_input, pre_activation


nets = [Net(batch_normalization=False), Net(batch_normalization=True)]
opts = [torch.optim.Adam(net.parameters(), lr=LR) for net in nets]
loss_func = nn.MSELoss()
for epoch in range(2):
    for step in range(3):
        b_x = train_x[step * BATCH_SIZE:(step + 1) * BATCH_SIZE]
        b_y = train_y[step * BATCH_SIZE:(step + 1) * BATCH_SIZE]
        for net, opt in zip(nets, opts):
            pred, _, _ = net(b_x)
            loss = loss_func(pred, b_y)
            opt.zero_grad()
            loss.backward()
            opt.step()
print("done, last loss %.2f" % loss.item())
