"""Reproduction for `dann_source_mode_missing_zero_grad`: CuthbertCai/pytorch_DANN 540e0c16 (fix bugs in source and target mode).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
feature_extractor, class_classifier = nn.Linear(6, 5), nn.Linear(5, 3)
init = [p.detach().clone() for p in list(feature_extractor.parameters()) + list(class_classifier.parameters())]
batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(3)]


def train(fixed):
    for p, v in zip(list(feature_extractor.parameters()) + list(class_classifier.parameters()), init):
        p.data.copy_(v)
        p.grad = None
    applied = []
    for input1, label1 in batches:
        optimizer = optim.SGD(list(feature_extractor.parameters()) + list(class_classifier.parameters()), lr=0.0,
                              momentum=0.9)
        if fixed:
            optimizer.zero_grad()
        class_loss = nn.functional.cross_entropy(class_classifier(feature_extractor(input1)), label1)
        class_loss.backward()
        applied.append(class_classifier.weight.grad.clone())
        optimizer.step()
    return applied


f, b = train(True), train(False)
assert torch.allclose(b[2], f[0] + f[1] + f[2]) and not torch.allclose(b[2], f[2])
print("CONFIRMED")
