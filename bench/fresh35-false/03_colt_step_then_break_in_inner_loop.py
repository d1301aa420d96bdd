"""fresh35 false: eth-sri/colt code/learner.py:69 (GS503).

"This `zero_grad()` runs once, before the loop; each iteration backwards and steps, so gradients pile up." In
`learn_bounds`, `relu_opt.zero_grad()` (line 69) is the first statement of each `for it in range(50)` iteration; the
backward and `relu_opt.step()` are inside the inner `for j, layer in enumerate(net.blocks)` loop, in the
`if j == refine_opt:` arm that ends with `break`: one backward and one step per `it`, after that `it`'s zero_grad.
The loop below is the file's, with a toy layer stack; the gradient each step uses equals that iteration's own
gradient, computed again from scratch.
"""
import torch

torch.manual_seed(0)
relu_params = [torch.nn.Parameter(torch.full((3,), 0.5))]
blocks = [torch.nn.Linear(3, 3) for _ in range(4)]
refine_opt, neuron_idx, is_lb = 2, 1, True
relu_opt = torch.optim.Adam(relu_params, lr=0.1, weight_decay=0)
abs_inputs = torch.randn(1, 3)


def lower_bound(p):
    abs_curr = abs_inputs
    for j, layer in enumerate(blocks):
        if j == refine_opt:
            return abs_curr - 1
        abs_curr = layer(abs_curr) * p


for it in range(5):
    p0 = relu_params[0].detach().clone().requires_grad_(True)
    (own,) = torch.autograd.grad(-lower_bound(p0)[0, neuron_idx], [p0])
    abs_curr = abs_inputs
    relu_opt.zero_grad()
    backwards = 0
    for j, layer in enumerate(blocks):
        lb = abs_curr - 1
        if j == refine_opt:
            if is_lb:
                (-lb[0, neuron_idx]).backward()
                backwards += 1
            assert torch.allclose(relu_params[0].grad, own)     # no pile-up
            relu_opt.step()
            for param in relu_params:
                if param.grad is not None:
                    param.data = torch.clamp(param.data, 0, 1)
            break
        abs_curr = layer(abs_curr) * relu_params[0]
    assert backwards == 1
print("OK: one backward and one step per iteration, each after that iteration's zero_grad")
