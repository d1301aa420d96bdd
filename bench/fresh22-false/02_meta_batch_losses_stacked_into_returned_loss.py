"""fresh22 false: dongminlee94/meta-learning-for-everyone src/meta_rl/maml/algorithm/meta_learner.py:179 (GS404).

meta_surrogate_loss: `losses = []`; `for cur_task in range(self.meta_batch_size)`: an inner adaptation loop
(`inner_loss.backward(create_graph=require_grad)`; DifferentiableSGD's `step()` under
`set_grad_enabled(require_grad)`, which replaces each parameter by `param.add(param.grad, alpha=-lr)`), then
`loss = self.agent.policy_loss(valid_batch, is_meta_loss=True)`; `losses.append(loss)`; the parameters are
restored; after the loop `return torch.stack(losses).mean(), ...`. meta_update differentiates that returned mean
(`torch.autograd.grad(loss_before, params, retain_graph=True)`); the line-search calls compare it and `.item()` it.
The list is the meta-batch's losses, bounded by meta_batch_size, needed for the meta-gradient, and it dies with
the call (fresh21's e3bm family: an accumulation that is the function's result). Run below with the same
organisation: the meta-gradient flows through every task's loss, and no call's result outlives the next.
"""
import weakref

import torch
from torch import nn

torch.manual_seed(0)


class DifferentiableSGD:                             # src/meta_rl/maml/algorithm/optimizer.py, one level
    def __init__(self, model, lr=0.1):
        self.model, self.lr = model, lr

    def step(self):
        for name, param in list(self.model.named_parameters()):
            if param.grad is None:
                continue
            new_param = param.add(param.grad, alpha=-self.lr)
            del self.model._parameters[name]
            setattr(self.model, name, new_param)
            self.model._parameters[name] = new_param

    def zero_grad(self, set_to_none=False):
        for param in self.model.parameters():
            param.grad = None


policy = nn.Linear(4, 2)
inner_optimizer = DifferentiableSGD(policy)
meta_batch_size, num_adapt_epochs = 3, 2


def update_model(module, new_params):               # trpo.py:55, restore the pre-adaptation parameters
    for name, p in new_params.items():
        del module._parameters[name]
        setattr(module, name, p)
        module._parameters[name] = p
    for param in module.parameters():
        param.grad = None


def meta_surrogate_loss(set_grad):
    losses = []
    backup_params = dict(policy.named_parameters())
    for cur_task in range(meta_batch_size):
        for cur_adapt in range(num_adapt_epochs):
            require_grad = cur_adapt < num_adapt_epochs - 1 or set_grad
            inner_loss = (policy(torch.randn(8, 4)) ** 2).mean()
            inner_optimizer.zero_grad(set_to_none=True)
            inner_loss.backward(create_graph=require_grad)
            with torch.set_grad_enabled(require_grad):
                inner_optimizer.step()
        loss = (policy(torch.randn(8, 4)) - 1).pow(2).mean()
        losses.append(loss)                          # meta_learner.py:179
        update_model(policy, backup_params)
    return torch.stack(losses).mean()


params = list(policy.parameters())
loss_before = meta_surrogate_loss(set_grad=True)
grads = torch.autograd.grad(loss_before, params, retain_graph=True)
assert all(g.abs().sum() > 0 for g in grads)
refs = [weakref.ref(loss_before)]
loss_before = loss_before.detach()                   # meta_update: `loss_before.detach_()`
for i in range(3):                                   # line-search calls: the result is compared, then replaced
    loss_after = meta_surrogate_loss(set_grad=False)
    refs.append(weakref.ref(loss_after))
    _ = (loss_after < loss_before).item()
for p in policy.parameters():
    p.grad = None
alive = [r() is not None for r in refs]
print("meta-gradient norm %.4f; results still alive:" % grads[0].norm(), alive)
assert alive == [False, False, False, True]          # only the last result, as meta_update keeps it
