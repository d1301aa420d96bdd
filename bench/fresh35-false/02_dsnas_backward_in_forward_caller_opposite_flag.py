"""fresh35 false: SNAS-Series/SNAS-Series DSNAS/network.py:142 (GS410).

"This backward inside `forward` frees the caller's graph; its own backward then raises." `ShuffleNetV2_OneShot`
(built by DSNAS/train_imagenet.py with `args=args`) runs `(error_loss+loss_alpha).backward()` inside `forward` only
`if not self.args.random_sample and self.training and not self.args.gen_max_child_flag`; the only training caller
(train_imagenet.py:309-332) backwards `loss` only `if args.random_sample:`. The two backwards are on opposite values
of the same flag, so no step backwards a graph twice. Skeleton of both, a toy net.
"""
import types

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.log_alpha = nn.Parameter(torch.zeros(2, 3))
        self.features = nn.ModuleList([nn.ModuleList([nn.Linear(4, 4) for _ in range(3)]) for _ in range(2)])
        self.classifier = nn.Linear(4, 5)

    def forward(self, x, target=None, criterion=None):
        error_loss = 0
        loss_alpha = 0
        if self.args.random_sample:
            self.weights = torch.distributions.OneHotCategorical(torch.ones_like(self.log_alpha)).sample()
        else:
            self.weights = torch.distributions.OneHotCategorical(logits=self.log_alpha).sample()
        if not self.args.random_sample and not self.args.gen_max_child_flag:
            loss_alpha = torch.log((self.weights * F.softmax(self.log_alpha, dim=-1)).sum(-1)).sum()
            self.weights.requires_grad_()
        for i in range(2):
            pos = (self.weights[i, :] == 1).nonzero().item()
            x = self.features[i][pos](x) * self.weights[i, pos]
        x = self.classifier(x)
        if not self.args.random_sample and self.training and not self.args.gen_max_child_flag:
            error_loss = criterion(x, target)
            self.weights.grad = torch.zeros_like(self.weights)
            (error_loss + loss_alpha).backward()
            self.block_reward = self.weights.grad.data.sum(-1)
            self.log_alpha.grad.data.mul_(self.block_reward.view(-1, 1))
        if self.args.SinglePath:
            return x, error_loss, loss_alpha


for rs in (False, True):
    args = types.SimpleNamespace(random_sample=rs, gen_max_child_flag=False, SinglePath=True)
    model = Net(args).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for i in range(3):
        input_var, target_var = torch.randn(8, 4), torch.randint(0, 5, (8,))
        output, error_loss, loss_alpha = model(input_var, target_var, criterion)
        loss = criterion(output, target_var)
        if args.random_sample:
            loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"random_sample={rs}: 3 steps ran")
print("OK: the forward's backward and the caller's are never both taken")
