"""fresh32-false 02b: QUIET with the base engine. 02a with the call made directly (no pass-through function)."""
import torch
import torch.nn as nn


def step(model, x, eval_only):
    loss = model(x).pow(2).mean()
    if not eval_only:
        loss.backward()
    return loss.item()


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
