"""Reproduction for `sb_l2i_target_not_detached`: speechbrain/speechbrain commit a39071aaa9 ("aligned with torch nll_loss").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `c_soft = F.softmax(classification_out / gamma)` is used as the target of the fidelity loss without `.detach()`, so the interpreter's loss also back-propagates into the classifier it is meant to explain (wrong gradients); the fix detaches it.
"""

import torch

import torch.nn.functional as F
classifier = torch.nn.Linear(4, 3)
interpreter = torch.nn.Linear(4, 3)
x = torch.randn(2, 4)

def run(detach):
    classifier.zero_grad()
    classification_out = classifier(x)
    theta_out = torch.softmax(interpreter(x), dim=1)
    c_soft = F.softmax(classification_out / 1.0, dim=1)
    if detach:
        c_soft = c_soft.detach()
    loss = (-c_soft * theta_out.log()).sum(1).mean()
    loss.backward()
    return classifier.weight.grad

assert run(False) is not None and run(False).abs().sum() > 0   # the classifier gets gradients it should not
assert run(True) is None

print("CONFIRMED")
