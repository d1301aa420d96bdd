"""fresh35 false: DingfanChen/GS-WGAN source/models.py:155 (GS301).

"`out += torch.sum(self.linear_y(y) * h, dim=1, keepdim=True)` modifies `out`, `self.linear_y(y)`, which shares its
storage, was saved for backward by `*`." `out = self.linear(h)` is the output of an `nn.Linear` (wrapped in the
file's `SpectralNorm`, whose forward is `self._update_u_v(); return self.module.forward(*args)`), and
`self.linear_y(y)` the output of a separate `nn.Embedding` (wrapped the same way): two fresh tensors, no shared
storage, and Linear does not save its output. The real SpectralNorm (ops.py) and DiscriminatorDCGAN (models.py),
verbatim; the discriminator's loss backwards with and without spectral norm. Reported by the base engine as it
stands; `05b` (the same class built from plain nn.Linear / nn.Embedding, no wrapper) is quiet: the wrapper class's
results are what the engine conflates.
"""
import torch
import torch.nn as nn
from torch.nn import Parameter

IMG_W = IMG_H = 28


def l2_norm(v, eps=1e-10):
    '''
    L2 normalization
    :param v:
    :param eps:
    :return:
    '''
    return v / (v.norm() + eps)


class SpectralNorm(nn.Module):
    '''
    Spectral Normalization
    '''

    def __init__(self, module, name='weight', power_iterations=1):
        super(SpectralNorm, self).__init__()
        self.module = module
        self.name = name
        self.power_iterations = power_iterations
        if not self._made_params():
            self._make_params()

    def _update_u_v(self):
        u = getattr(self.module, self.name + "_u")
        v = getattr(self.module, self.name + "_v")
        w = getattr(self.module, self.name + "_bar")

        height = w.data.shape[0]
        for _ in range(self.power_iterations):
            v.data = l2_norm(torch.mv(torch.t(w.view(height, -1).data), u.data))
            u.data = l2_norm(torch.mv(w.view(height, -1).data, v.data))

        sigma = u.dot(w.view(height, -1).mv(v))
        setattr(self.module, self.name, w / sigma.expand_as(w))
        del u, v, w

    def _made_params(self):
        try:
            u = getattr(self.module, self.name + "_u")
            v = getattr(self.module, self.name + "_v")
            w = getattr(self.module, self.name + "_bar")
            return True
        except AttributeError:
            return False

    def _make_params(self):
        w = getattr(self.module, self.name)

        height = w.data.shape[0]
        width = w.view(height, -1).data.shape[1]

        u = Parameter(w.data.new(height).normal_(0, 1), requires_grad=False)
        v = Parameter(w.data.new(width).normal_(0, 1), requires_grad=False)
        u.data = l2_norm(u.data)
        v.data = l2_norm(v.data)
        w_bar = Parameter(w.data)

        del self.module._parameters[self.name]

        self.module.register_parameter(self.name + "_u", u)
        self.module.register_parameter(self.name + "_v", v)
        self.module.register_parameter(self.name + "_bar", w_bar)

    def forward(self, *args):
        self._update_u_v()
        return self.module.forward(*args)


class DiscriminatorDCGAN(nn.Module):
    def __init__(self, model_dim=64, num_classes=10, if_SN=True):
        super(DiscriminatorDCGAN, self).__init__()

        self.model_dim = model_dim
        self.num_classes = num_classes

        if if_SN:
            self.conv1 = SpectralNorm(nn.Conv2d(1, model_dim, 5, stride=2, padding=2))
            self.conv2 = SpectralNorm(nn.Conv2d(model_dim, model_dim * 2, 5, stride=2, padding=2))
            self.conv3 = SpectralNorm(nn.Conv2d(model_dim * 2, model_dim * 4, 5, stride=2, padding=2))
            self.linear = SpectralNorm(nn.Linear(4 * 4 * 4 * model_dim, 1))
            self.linear_y = SpectralNorm(nn.Embedding(num_classes, 4 * 4 * 4 * model_dim))
        else:
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
    for sn_flag in (True, False):
        d = DiscriminatorDCGAN(model_dim=4, num_classes=10, if_SN=sn_flag)
        out = d(torch.randn(3, 28 * 28), torch.randint(0, 10, (3,)))
        out.mean().backward()
    print("OK")
