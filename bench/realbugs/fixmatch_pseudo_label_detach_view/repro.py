"""Reproduction for `fixmatch_pseudo_label_detach_view`: kekmodel/FixMatch-pytorch 56d7fae (Change pseudo_label).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 3)
batch_size = 2
inputs = torch.randn(2 + 2 * 3, 4)


def step(fixed):
    logits = model(inputs)
    logits_x = logits[:batch_size]
    logits_u_w, logits_u_s = logits[batch_size:].chunk(2)
    if fixed:
        pseudo_label = torch.softmax(logits_u_w, dim=-1).detach()
    else:
        pseudo_label = torch.softmax(logits_u_w.detach_(), dim=-1)     # buggy: in-place detach of a view
    max_probs, targets_u = torch.max(pseudo_label, dim=-1)
    loss = torch.nn.functional.cross_entropy(logits_u_s, targets_u) + logits_x.sum() * 0
    loss.backward()


try:
    step(False)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "Can't detach views in-place" in str(e), e
step(True)
print("CONFIRMED")
