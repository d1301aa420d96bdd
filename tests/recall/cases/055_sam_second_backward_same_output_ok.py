import torch
import torch.nn as nn


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * group["rho"]
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


def train(model, criterion, optimizer, batches):
    for images, target in batches:
        output = model(images)
        loss = criterion(output, target)
        loss.backward()
        optimizer.first_step(zero_grad=True)
        criterion(model(images), target).backward()
        optimizer.second_step(zero_grad=True)


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
sam = SAM(net.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
data = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(2)]
train(net, nn.CrossEntropyLoss(), sam, data)
