"""fresh35 false pair of 07a: the same with `net = model(num_classes=10)`: quiet with the base engine; runs."""
import torch
import torch.nn as nn


def build(num_classes):
    return nn.Linear(4, num_classes)


FACTORIES = {'linear': build}


def main(name):
    model = FACTORIES[name]
    net = model(num_classes=10)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    print("OK:", type(net).__name__)


if __name__ == '__main__':
    main('linear')
