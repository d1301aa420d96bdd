"""fresh20 (false): GS401 rinongal/StyleGAN-nada `ZSSGAN/model/ZSSGAN.py:341`.

`ZSSGAN.forward` starts with `if self.training and self.auto_layer_iters > 0: ... self.determine_opt_layers()`, and
`determine_opt_layers` runs an inner optimisation with `w_loss.backward()`. train.py calls the model under
`torch.no_grad()` twice (lines 102, 139), each time right after `net.eval()`, so `self.training` is False there and
the backward is never reached with grad mode off; the training call (line 90) runs with grad mode on. The engine
does not follow the module's training flag: it takes the `self.training` branch under the caller's `no_grad`.
This program keeps the same control flow and runs cleanly.
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.auto_layer_iters = 2

    def determine_opt_layers(self):
        w = torch.randn(3, 4, requires_grad=True)
        w_optim = torch.optim.SGD([w], lr=0.01)
        for _ in range(self.auto_layer_iters):
            w_loss = self.gen(w).pow(2).sum()
            w_optim.zero_grad()
            w_loss.backward()        # raises if grad mode is off
            w_optim.step()
        return 0

    def forward(self, z):
        if self.training and self.auto_layer_iters > 0:
            self.determine_opt_layers()
        return self.gen(z).sum()


net = Net()
opt = torch.optim.Adam(net.parameters())
fixed_z = torch.randn(2, 4)
for i in range(3):
    net.train()
    loss = net(torch.randn(2, 4))
    net.zero_grad()
    loss.backward()
    opt.step()
    if i % 2 == 0:
        net.eval()
        with torch.no_grad():
            loss = net(fixed_z)      # eval mode: determine_opt_layers is skipped
for i in range(2):
    net.eval()
    with torch.no_grad():
        net(torch.randn(2, 4))
print("clean: the backward inside `if self.training` never runs under no_grad")
