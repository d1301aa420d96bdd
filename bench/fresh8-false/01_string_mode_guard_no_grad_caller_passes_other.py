# From D-X-Y/AutoDL-Projects xautodl/procedures/funcs_nasbench.py:66 (fresh8, first try at 74f27a1); the same shape
# in xautodl/procedures/simple_KD_main.py:76 (there the loss comes from a helper, and the finding lands on its return).
# Finding: GS401 "This runs with grad mode disabled, so `loss.backward()` at line 69 raises."
# Why wrong: one `procedure(..., mode)` serves training and validation. The backward is under `if mode == "train":`,
# and the only call under `torch.no_grad()` passes `mode="valid"`; the training call (grad mode on) passes "train".
# No call under no_grad reaches the backward (this program runs both and trains). A bool flag (`if mode:` with
# True/False at the calls) is already quiet; the comparison of a string parameter with a string constant is not
# decided from the constant the call passes.
import torch
import torch.nn as nn


def procedure(xloader, network, criterion, optimizer, mode):
    if mode == "train":
        network.train()
    elif mode == "valid":
        network.eval()
    else:
        raise ValueError(mode)
    for inputs, targets in xloader:
        if mode == "train":
            optimizer.zero_grad()
        logits = network(inputs)
        loss = criterion(logits, targets)
        if mode == "train":
            loss.backward()
            optimizer.step()
    return loss.item()


def train(xloader, network, criterion, optimizer):
    return procedure(xloader, network, criterion, optimizer, "train")


def valid(xloader, network, criterion):
    with torch.no_grad():
        return procedure(xloader, network, criterion, None, "valid")


net = nn.Linear(4, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
print(train(data, net, nn.CrossEntropyLoss(), opt), valid(data, net, nn.CrossEntropyLoss()))
