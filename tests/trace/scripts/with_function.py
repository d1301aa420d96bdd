# expect: with --function train: GS903 at line 9 (the no_grad block); the __main__ block does not run
import torch

x = torch.randn(3, requires_grad=True)


def train():
    y = x * 2
    with torch.no_grad():
        z = y * 3
    z.sum().backward()


if __name__ == "__main__":
    raise SystemExit("must not run under --function")
