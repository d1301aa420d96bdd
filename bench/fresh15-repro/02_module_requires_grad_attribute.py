"""fresh15: GS512 RCAN `code/model/common.py:22` (real) and `code/loss/vgg.py:22` (harmless), both copies.

`MeanShift(nn.Conv2d)` sets `self.requires_grad = False`: a plain attribute; its weight and bias still require
grad, `utility.make_optimizer` keeps `filter(lambda x: x.requires_grad, model.parameters())`, so the fixed RGB
mean shift of RCAN/EDSR (`sub_mean`, `add_mean`) is trained with the network and drifts from the dataset mean.
`VGG.vgg.requires_grad = False` likewise freezes nothing, but the loss module's parameters are in no optimizer:
backward only fills their `.grad` (wasted work, the training result is unchanged).
"""
import torch
import torch.nn as nn


class MeanShift(nn.Conv2d):
    def __init__(self, rgb_range, rgb_mean, rgb_std, sign=-1):
        super().__init__(3, 3, kernel_size=1)
        std = torch.Tensor(rgb_std)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1)
        self.weight.data.div_(std.view(3, 1, 1, 1))
        self.bias.data = sign * rgb_range * torch.Tensor(rgb_mean)
        self.bias.data.div_(std)
        self.requires_grad = False


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub_mean = MeanShift(255, (0.4488, 0.4371, 0.4040), (1.0, 1.0, 1.0))
        self.body = nn.Conv2d(3, 3, 3, padding=1)
        self.add_mean = MeanShift(255, (0.4488, 0.4371, 0.4040), (1.0, 1.0, 1.0), 1)

    def forward(self, x):
        return self.add_mean(self.body(self.sub_mean(x)))


net = Net()
trainable = list(filter(lambda x: x.requires_grad, net.parameters()))  # utility.make_optimizer
assert any(p is net.sub_mean.weight for p in trainable)
opt = torch.optim.Adam(trainable, lr=1e-3)
before = net.sub_mean.bias.detach().clone()
for _ in range(3):
    opt.zero_grad()
    nn.functional.l1_loss(net(torch.rand(2, 3, 8, 8) * 255), torch.rand(2, 3, 8, 8) * 255).backward()
    opt.step()
print("MeanShift bias moved by", (net.sub_mean.bias.detach() - before).abs().max().item())
assert not torch.equal(before, net.sub_mean.bias.detach())

vgg = nn.Sequential(nn.Conv2d(3, 3, 3))
vgg.requires_grad = False
sr = torch.rand(1, 3, 8, 8, requires_grad=True)
nn.functional.mse_loss(vgg(sr), torch.zeros(1, 3, 6, 6)).backward()
print("vgg weight requires_grad:", vgg[0].weight.requires_grad, "grad filled:", vgg[0].weight.grad is not None)
