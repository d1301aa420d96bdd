"""Reproduction for `rlkit_kl_grad_zeroed`: rail-berkeley/rlkit commit fbe8269 ("FIX!! apply gradients from KL loss").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `_take_step` calls `kl_loss.backward(retain_graph=True)` and then
`self.context_optimizer.zero_grad()` before the reward-prediction and Q backward passes, so the KL
term's gradient on the encoder is wiped before `context_optimizer.step()`: the information bottleneck
never trains. The fix moves `context_optimizer.zero_grad()` before the KL backward.
"""

import torch

torch.manual_seed(0)
encoder = torch.nn.Linear(3, 2)
context_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
x = torch.randn(4, 3)


def take_step(fixed, use_kl):
    z = encoder(x)
    if fixed:
        context_optimizer.zero_grad()              # the fix: zero before the KL backward
    if use_kl:
        kl_loss = (z ** 2).mean()                  # stands for the KL of the posterior over z
        kl_loss.backward(retain_graph=True)
    if not fixed:
        context_optimizer.zero_grad()              # buggy: wipes the KL gradient
    qf_loss = z.sum()
    qf_loss.backward()
    return encoder.weight.grad.clone()


assert torch.equal(take_step(fixed=False, use_kl=True), take_step(fixed=False, use_kl=False))   # KL has no effect
assert not torch.equal(take_step(fixed=True, use_kl=True), take_step(fixed=True, use_kl=False))

print("CONFIRMED")
