"""Reproduction for `esrgan_gen_step_zero_grad_wrong_model`: Lornatang/ESRGAN-PyTorch 15b62caf (new version, new architecture).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)


def run(fixed, steps=3):
    torch.manual_seed(0)
    g_model, d_model = nn.Linear(4, 4), nn.Linear(4, 1)
    g_optimizer = torch.optim.SGD(g_model.parameters(), lr=0.0)     # lr 0: compare the gradients it would apply
    d_optimizer = torch.optim.SGD(d_model.parameters(), lr=0.0)
    lr_batches = [torch.randn(2, 4) for _ in range(steps)]
    seen = []
    for lr_img in lr_batches:
        for p in d_model.parameters():
            p.requires_grad = False
        (g_model if fixed else d_model).zero_grad(set_to_none=True)
        sr = g_model(lr_img)
        g_loss = sr.pow(2).mean() - d_model(sr).mean()
        g_loss.backward()
        seen.append(g_model.weight.grad.clone())
        g_optimizer.step()
        for p in d_model.parameters():
            p.requires_grad = True
        d_model.zero_grad(set_to_none=True)
        d_loss = d_model(sr.detach()).mean()
        d_loss.backward()
        d_optimizer.step()
    return seen


fixed, buggy = run(True), run(False)
assert torch.allclose(buggy[0], fixed[0])
assert torch.allclose(buggy[2], fixed[0] + fixed[1] + fixed[2])     # buggy: step 3 applies the sum of all three
print("CONFIRMED")
