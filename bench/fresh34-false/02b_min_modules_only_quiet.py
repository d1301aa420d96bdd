import torch
from torch import nn


def freeze_parameters(m, requires_grad=False):
    if m is None:
        return

    if isinstance(m, nn.Parameter):
        m.requires_grad = requires_grad
    else:
        for p in m.parameters():
            p.requires_grad = requires_grad


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.pos_embed = nn.Parameter(torch.zeros(1, 2))
        self.task_tokens = nn.ParameterList([nn.Parameter(torch.zeros(1, 2))])

    def freeze(self, name):
        if name == 'a':
            freeze_parameters(self.lin)

        else:
            freeze_parameters(self.task_tokens[:-1])


if __name__ == "__main__":
    net = Net()
    for name in ("a", "b", "c"):
        net.freeze(name)
    print("runs:", [p.requires_grad for p in net.parameters()])
