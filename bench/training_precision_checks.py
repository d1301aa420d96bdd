"""Torch checks behind the verdicts on the training-code corpus (docs/precision.md, "Training code").

    .venv/bin/python bench/training_precision_checks.py

Each check is our own minimal program with the shape of the flagged statements (the corpus files are
fetched by bench/corpus.py --training, not stored here). It prints one line per check and exits 1 if a
check does not behave as the verdict in docs/precision.md says.
"""

from __future__ import annotations

import sys

import torch


def total_loss_never_reset() -> str:
    """pyg examples/equilibrium_median.py:36 and rdl.py:548: `total_loss += loss` after backward, in a loop."""
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    total_loss = 0
    for _ in range(3):
        opt.zero_grad()
        loss = model(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
        opt.step()
        total_loss += loss
    # The running sum is a chain of AddBackward nodes that references every step's graph.
    assert isinstance(total_loss, torch.Tensor) and total_loss.grad_fn is not None
    depth, node = 0, total_loss.grad_fn
    while node is not None and node.name() == "AddBackward0":
        depth += 1
        node = node.next_functions[0][0]
    assert depth >= 2, depth
    return f"real bug: the running total keeps a chain of {depth} AddBackward nodes (one per step's graph)"


def zero_grad_never_called() -> str:
    """pyro examples/contrib/timeseries/gp_models.py:78: backward + step in a loop, no zero_grad."""
    w = torch.nn.Parameter(torch.tensor([1.0]))
    opt = torch.optim.SGD([w], lr=0.0)  # lr 0 keeps w fixed, so every step's own gradient is the same
    grads = []
    for _ in range(3):
        loss = (w * 2).sum()
        loss.backward()
        opt.step()
        grads.append(w.grad.item())
    assert grads == [2.0, 4.0, 6.0], grads
    return f"real bug: gradients seen by the optimizer grow as {grads} instead of staying 2.0"


def constant_accumulator_plus_grad_loss() -> str:
    """pytorch-maml maml.py:203 (GS401): `mean_outer_loss = torch.tensor(0.)`, then `+= outer_loss`."""
    model = torch.nn.Linear(3, 1)
    mean_outer_loss = torch.tensor(0.0)
    for _ in range(2):
        with torch.set_grad_enabled(True):
            outer_loss = model(torch.randn(2, 3)).pow(2).mean()
        mean_outer_loss += outer_loss
    mean_outer_loss.div_(2)
    mean_outer_loss.backward()  # works: the in-place add gave the constant a grad_fn
    assert model.weight.grad is not None
    return "false alarm: `+=` of a loss with history makes the constant accumulator require grad; backward works"


def cached_loss_list_detached_on_backward_branch() -> str:
    """sentence-transformers Cached*Loss (GS404): append `loss.detach()` after backward, else the loss itself."""
    model = torch.nn.Linear(3, 1)
    for with_backward in (True, False):
        losses = []
        for _ in range(3):
            loss_mbatch = model(torch.randn(2, 3)).pow(2).mean()
            if with_backward:
                loss_mbatch.backward()
                loss_mbatch = loss_mbatch.detach()
            losses.append(loss_mbatch)
        loss = sum(losses)
        # With backward, nothing in the list carries a graph; without it, the sum is the loss the caller
        # backwards once (a list local to one call, not a leak across steps).
        assert (loss.grad_fn is None) == with_backward
    return "false alarm: the list is local to one call and detached on the branch that already ran backward"


CHECKS = (total_loss_never_reset, zero_grad_never_called, constant_accumulator_plus_grad_loss,
          cached_loss_list_detached_on_backward_branch)


def main() -> int:
    failed = 0
    for check in CHECKS:
        try:
            print(f"ok    {check.__name__}: {check()}")
        except AssertionError as exc:
            failed += 1
            print(f"FAIL  {check.__name__}: {exc!r}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
