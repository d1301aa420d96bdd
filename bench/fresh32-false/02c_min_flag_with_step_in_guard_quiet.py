"""fresh32-false 02c: QUIET with the base engine. 02a (one pass-through) with `opt.zero_grad()` and `opt.step()`
beside the backward under `if not eval_only:`; in the repository the step is in the pass-through function's own
`if not eval_only:` block instead, which does not quiet it."""
import torch
import torch.nn as nn


def inner(model, opt, x, eval_only):
    loss = model(x).pow(2).mean()
    if not eval_only:
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def step(model, opt, x, eval_only):
    return inner(model, opt, x, eval_only)


def main():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 3)
    step(model, opt, x, False)
    with torch.no_grad():
        step(model, opt, x, True)
    print("OK: the no_grad call ran with eval_only=True; no backward inside the block")


if __name__ == "__main__":
    main()
