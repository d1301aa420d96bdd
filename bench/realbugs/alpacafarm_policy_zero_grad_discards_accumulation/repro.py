"""Reproduction for `alpacafarm_policy_zero_grad_discards_accumulation`: tatsu-lab/alpaca_farm c0cdca9 (fix zero grad bug.).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class AcceleratedOptimizer:              # accelerate's wrapper: step/zero_grad only act on sync steps
    def __init__(self, opt):
        self.opt = opt
        self.sync_gradients = False

    def step(self):
        if self.sync_gradients:
            self.opt.step()

    def zero_grad(self, set_to_none=True):
        if self.sync_gradients:
            self.opt.zero_grad(set_to_none=set_to_none)


def grad_at_step(fixed, accum=3):
    torch.manual_seed(0)
    policy = torch.nn.Linear(3, 1)
    optimizer = AcceleratedOptimizer(torch.optim.SGD(policy.parameters(), lr=0.0))
    batches = [torch.randn(4, 3) for _ in range(accum)]
    seen = None
    for i, x in enumerate(batches, 1):
        optimizer.sync_gradients = (i % accum == 0)           # accelerator.accumulate(self.policy)
        ppo_loss = policy(x).pow(2).mean() / accum
        ppo_loss.backward()
        if optimizer.sync_gradients:
            seen = policy.weight.grad.clone()                   # what the real step uses
        optimizer.step()
        if fixed:
            optimizer.zero_grad(set_to_none=True)
        else:
            policy.zero_grad(set_to_none=True)                  # buggy: not gated by accelerate
    full = sum(torch.autograd.grad(policy(x).pow(2).mean() / accum, policy.weight)[0] for x in batches)
    return torch.allclose(seen, full)


assert not grad_at_step(False)        # only the last micro-batch reaches the step
assert grad_at_step(True)
print("CONFIRMED")
