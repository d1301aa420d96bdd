"""fresh36 false 02a (minimised with the base engine f0cf961: reported, GS301 at the `volume_sum += warped` line).
The in-place sum sits in the `else:` arm of `if self.training:`; main() runs the module only in train mode (with
backward) and in train mode under no_grad, as mvsnerf does. Runs under torch without error."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, feats):
        ref = self.conv(feats[0]).unsqueeze(2).repeat(1, 1, 3, 1, 1)
        volume_sum = ref
        volume_sq_sum = ref ** 2
        for f in feats[1:]:
            warped = self.conv(f).unsqueeze(2).repeat(1, 1, 3, 1, 1)
            if self.training:
                volume_sum = volume_sum + warped
                volume_sq_sum = volume_sq_sum + warped ** 2
            else:
                volume_sum += warped
                volume_sq_sum += warped.pow_(2)
        return volume_sq_sum - volume_sum ** 2


def main():
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net.train()
    for _ in range(2):
        feats = torch.rand(3, 1, 3, 4, 4)
        loss = net(feats).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.train()
    with torch.no_grad():
        net(torch.rand(3, 1, 3, 4, 4))


if __name__ == "__main__":
    main()
