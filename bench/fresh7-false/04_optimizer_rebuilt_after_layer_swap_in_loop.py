# From hshustc/CVPR19_Incremental_Learning cifar100-class-incremental/class_incremental_cifar100.py:154 (and
# imagenet-class-incremental/class_incremental_imagenet.py:187) (fresh7, first try at d79ed50).
# Finding: GS504 "The optimizer built at line 230 holds the old parameters, so the new `tg_model.fc` is never
# updated by `step()`; build the optimizer after replacing layers."
# Why wrong: each incremental step replaces `tg_model.fc` and then, later in the same loop iteration, builds a
# new optimizer on `tg_model.parameters()` and trains with it; the optimizer of the previous iteration is never
# stepped again. This program checks that the new fc is updated.
import copy

import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.fc = nn.Linear(4, n)

    def forward(self, x):
        return self.fc(self.body(x))


def incremental_train_and_eval(epochs, tg_model, ref_model, tg_optimizer):
    for _ in range(epochs):
        tg_optimizer.zero_grad()
        tg_model(torch.randn(8, 4)).pow(2).sum().backward()
        tg_optimizer.step()
    return tg_model


tg_model = None
for iteration in range(3):
    if iteration == 0:
        tg_model = Net(2)
        ref_model = None
    else:
        ref_model = copy.deepcopy(tg_model)
        in_features = tg_model.fc.in_features
        out_features = tg_model.fc.out_features
        new_fc = nn.Linear(in_features, out_features + 2)
        new_fc.weight.data[:out_features] = tg_model.fc.weight.data
        new_fc.bias.data[:out_features] = tg_model.fc.bias.data
        tg_model.fc = new_fc
    before = tg_model.fc.weight.detach().clone()
    tg_params = tg_model.parameters()
    tg_optimizer = optim.SGD(tg_params, lr=0.1)
    tg_model = incremental_train_and_eval(2, tg_model, ref_model, tg_optimizer)
    assert not torch.equal(before, tg_model.fc.weight), "new fc not trained"
print("ok")
