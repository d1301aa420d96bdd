"""fresh35 false pair of 05: the same discriminator with plain nn.Linear / nn.Embedding (no SpectralNorm wrapper): quiet with the base engine; runs under torch."""
import torch
import torch.nn as nn

IMG_W = IMG_H = 28


class DiscriminatorDCGAN(nn.Module):
    def __init__(self, model_dim=64, num_classes=10, if_SN=True):
        super(DiscriminatorDCGAN, self).__init__()

        self.model_dim = model_dim
        self.num_classes = num_classes

        self.conv1 = nn.Conv2d(1, model_dim, 5, stride=2, padding=2)
        self.conv2 = nn.Conv2d(model_dim, model_dim * 2, 5, stride=2, padding=2)
        self.conv3 = nn.Conv2d(model_dim * 2, model_dim * 4, 5, stride=2, padding=2)
        self.linear = nn.Linear(4 * 4 * 4 * model_dim, 1)
        self.linear_y = nn.Embedding(num_classes, 4 * 4 * 4 * model_dim)
        self.relu = nn.ReLU()

    def forward(self, input, y):
        input = input.view(-1, 1, IMG_W, IMG_H)
        h = self.relu(self.conv1(input))
        h = self.relu(self.conv2(h))
        h = self.relu(self.conv3(h))
        h = h.view(-1, 4 * 4 * 4 * self.model_dim)
        out = self.linear(h)
        out += torch.sum(self.linear_y(y) * h, dim=1, keepdim=True)
        return out.view(-1)


# Runs under torch: the discriminator's loss backwards, with and without spectral norm.
if __name__ == "__main__":
    for sn_flag in (False,):
        d = DiscriminatorDCGAN(model_dim=4, num_classes=10, if_SN=sn_flag)
        out = d(torch.randn(3, 28 * 28), torch.randint(0, 10, (3,)))
        out.mean().backward()
    print("OK")
