# From mit-han-lab/once-for-all ofa/utils/common_tools.py:275 (fresh7, first try at d79ed50); the callers are
# ofa/imagenet_classification/run_manager/distributed_run_manager.py:411 (after loss.backward()) and :293.
# Finding: GS404 "This adds a tensor with its graph into the object on every call, so memory grows every step."
# (here reported at the caller: "`losses.update()` keeps a tensor with its graph each step").
# Why wrong: what is added is `hvd.allreduce(val.detach().cpu(), ...)`: the argument is detached, and an
# allreduce of a detached tensor has no graph either (horovod's allreduce is an autograd Function of its
# input). The engine keeps the graph of `val` through a call into a library it cannot see even though the only
# tensor passed is detached. horovod is not installed here, so a one-process stand-in replaces it when the
# import fails; gradsight still sees the horovod call (without the try/except, the same finding, but the
# program needs horovod). Run: `losses.sum.requires_grad` is False.
import torch
import torch.nn as nn


class DistributedMetric(object):
    def __init__(self, name):
        self.name = name
        self.sum = torch.zeros(1)[0]
        self.count = torch.zeros(1)[0]

    def update(self, val, delta_n=1):
        try:
            import horovod.torch as hvd
        except ImportError:  # one process here: stand in for horovod
            import types
            hvd = types.SimpleNamespace(allreduce=lambda tensor, name=None: tensor.clone())

        val *= delta_n
        self.sum += hvd.allreduce(val.detach().cpu(), name=self.name)
        self.count += delta_n


net = nn.Linear(4, 1)
losses = DistributedMetric("train_loss")
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    loss = net(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.update(loss, 8)
print("ok", losses.sum.requires_grad)
