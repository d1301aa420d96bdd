"""fresh32-false 02a (minimised from facebookresearch/adaptive-span main.py:131, GS109): REPORTED by the base engine.

A flag passed as the literal True at a call inside `torch.no_grad()`, handed on unchanged by one pass-through
function to the function whose only backward is under `if not eval_only:`. Under torch nothing is differentiated
in the block (run below). Compare 02b (the same call made directly: quiet) and 02c (the same pass-through with
`opt.zero_grad()` / `opt.step()` beside the backward in the guarded block: quiet).
"""
import torch
import torch.nn as nn


def inner(model, x, eval_only):
    loss = model(x).pow(2).mean()
    if not eval_only:
        loss.backward()
    return loss.item()


def step(model, x, eval_only):
    return inner(model, x, eval_only)


def main():
    model = nn.Linear(3, 1)
    x = torch.randn(4, 3)
    step(model, x, False)
    assert model.weight.grad is not None
    with torch.no_grad():
        step(model, x, True)
    print("OK: the no_grad call ran with eval_only=True; no backward inside the block")


if __name__ == "__main__":
    main()
