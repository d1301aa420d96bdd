"""Reproduction for `tabnet_sparse_loss_inplace_sub`: dreamquark-ai/tabnet commit df77cced ("fix: custom loss using inplace operations").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `loss -= self.lambda_sparse * M_loss` subtracts the sparsity term in place from the tensor returned by
the (user-supplied) loss function; when that function's last op saves its output for backward (e.g. an RMSE
loss ending in `torch.sqrt`), `loss.backward()` raises "one of the variables needed for gradient computation
has been modified by an inplace operation". The fix writes `loss = loss - self.lambda_sparse * M_loss`.
"""

import torch

net = torch.nn.Linear(4, 1)
X, y = torch.randn(8, 4), torch.randn(8, 1)


def rmse_loss(y_score, y_true):                  # a custom loss_fn, as users pass to TabNet
    return torch.sqrt(torch.nn.functional.mse_loss(y_score, y_true))


def train_batch(fixed, lambda_sparse=1e-3):
    for param in net.parameters():
        param.grad = None
    output = net(X)
    M_loss = output.abs().mean()                 # stands for the attention sparsity term
    loss = rmse_loss(output, y)
    if fixed:
        loss = loss - lambda_sparse * M_loss
    else:
        loss -= lambda_sparse * M_loss           # buggy: in place on sqrt's saved output
    loss.backward()


try:
    train_batch(False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
train_batch(True)
assert net.weight.grad is not None

print("CONFIRMED")
