"""Reproduction for `rrd_zero_grad_breaks_accumulation`: tientrandinh/Revisiting-Reverse-Distillation commit 94a8df53 ("fix clear gradients").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the training loop calls `optimizer.zero_grad()` before every `loss.backward()` but only steps every
`accumulation_steps` iterations, so the gradients of the earlier micro-batches are discarded and each step uses
only the last micro-batch's gradient (accumulation silently disabled). The fix zeroes the grads after the step.
"""

import torch

torch.manual_seed(0)
accumulation_steps = 4
batches = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(accumulation_steps)]


def grads_at_step(fixed):
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)   # lr 0: only look at the gradient used by step()
    seen = None
    for i, (x, y) in enumerate(batches):
        loss = ((model(x) - y) ** 2).mean()
        if not fixed:
            optimizer.zero_grad()                              # buggy: every iteration
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            seen = model.weight.grad.clone()
            optimizer.step()
            if fixed:
                optimizer.zero_grad()
    return model, seen


model, buggy = grads_at_step(False)
ref = torch.nn.Linear(3, 1)
ref.load_state_dict(model.state_dict())
full = sum(((ref(x) - y) ** 2).mean() for x, y in batches)
g_full, = torch.autograd.grad(full, ref.weight)
x, y = batches[-1]
g_last, = torch.autograd.grad(((ref(x) - y) ** 2).mean(), ref.weight)
assert torch.allclose(buggy, g_last) and not torch.allclose(buggy, g_full)   # only the last micro-batch
_, fixed = grads_at_step(True)
assert torch.allclose(fixed, g_full, atol=1e-6)

print("CONFIRMED")
