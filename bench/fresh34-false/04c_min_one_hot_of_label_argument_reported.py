import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.class_classifier = nn.Linear(4, 3)

    def forward(self, x, gt=None, flag=None):
        if flag:
            x_new = x.clone().detach().requires_grad_(True)
            output = self.class_classifier(x_new)
            one_hot_sparse = torch.nn.functional.one_hot(gt, 3).float()
            one_hot = torch.sum(output * one_hot_sparse)
            self.zero_grad()
            one_hot.backward()
            self.zero_grad()
        return self.class_classifier(x)


if __name__ == "__main__":
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        x = torch.nn.Linear(4, 4)(torch.randn(5, 4))   # the caller's graph, as the backbone's output would be
        gt = torch.randint(0, 3, (5,))
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x, gt, True), gt).backward()
        opt.step()
    print("runs: the forward's own backward leaves the caller's backward intact")
