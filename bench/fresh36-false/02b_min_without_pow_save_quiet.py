"""fresh36 false 02b (minimised with the base engine f0cf961: quiet). 02a with `volume_sq_sum = torch.zeros_like(ref)`
instead of `ref ** 2`: nothing saves the aliased tensor, so the same eval-arm in-place sum is not reported. The
report in 02a comes from the pow saving `ref` alone, not from the arm being taken with grad on. Runs under torch."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, feats):
        ref = self.conv(feats[0]).unsqueeze(2).repeat(1, 1, 3, 1, 1)
        volume_sum = ref
        volume_sq_sum = torch.zeros_like(ref)
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
