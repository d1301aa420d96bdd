"""Reproduction for `dctr_reg_weight_unbind_views`: shenweichen/DeepCTR-Torch commit 2e42ff66 ("Dev zsx (#142)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `add_regularization_weight(self.dnn_linear.weight, ...)` stores `list(weight_list)`; for a single Parameter
this iterates the tensor, i.e. makes unbind views of it (with a grad_fn) once at construction. After the optimizer
updates the weight in place, using those views in `get_regularization_loss()` raises "Output 0 of Unbind is a view
and its base ... has been modified inplace" (issue #130). The fix wraps a Parameter in a list instead.
"""

import torch

torch.manual_seed(0)
dnn_linear = torch.nn.Linear(4, 1, bias=False)


def add_regularization_weight(weight_list, fixed):
    if fixed and isinstance(weight_list, torch.nn.parameter.Parameter):
        weight_list = [weight_list]
    else:
        weight_list = list(weight_list)            # buggy for a Parameter: unbind views
    return [(weight_list, 1e-5, 2)]


def get_regularization_loss(regularization_weight):
    total = torch.zeros((1,))
    for weight_list, wd, p in regularization_weight:
        r = torch.zeros((1,))
        for w in weight_list:
            r = r + torch.norm(w, p=p)
        total = total + wd * r
    return total


def fit(fixed, steps=3):
    reg_w = add_regularization_weight(dnn_linear.weight, fixed)
    optim = torch.optim.Adam(dnn_linear.parameters())
    x, y = torch.randn(8, 4), torch.rand(8)
    for _ in range(steps):
        optim.zero_grad()
        loss = ((dnn_linear(x).squeeze(-1) - y) ** 2).sum() + get_regularization_loss(reg_w)
        loss.backward()
        optim.step()


try:
    fit(False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "is a view and its base" in str(e), e
fit(True)

print("CONFIRMED")
