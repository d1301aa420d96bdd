"""fresh35 false, minimised shape of 07 (reported by the base engine at `model.parameters()`; runs under torch):
`model = FACTORIES[name]; model = model(num_classes=10)` -- a name rebound to the result of calling its own earlier
value -- in a function called from the `if __name__ == "__main__":` block. 07b (the result bound to another name) is
quiet, and so is this file without the entry-point call."""
import torch
import torch.nn as nn


def build(num_classes):
    return nn.Linear(4, num_classes)


FACTORIES = {'linear': build}


def main(name):
    model = FACTORIES[name]
    model = model(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    print("OK:", type(model).__name__)


if __name__ == '__main__':
    main('linear')
