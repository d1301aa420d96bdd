"""Reproduction for `ta_cw_best_adv_keeps_graph`: Harry24k/adversarial-attacks-pytorch commit a464809 ("Clone the attack result avoid pytorch error `Saved intermediate values of the graph are freed ...`").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the CW attacks copy `adv_images[mask]` (computed from the optimised leaf `w`) into
`best_adv_images` in place and return it, so the result carries the attack's graph, whose saved
tensors the attack's own `cost.backward()` already freed; a caller that backpropagates through a loss
on the returned images (adversarial training) raises "Trying to backward through the graph a second
time". The fix returns `best_adv_images.clone().detach()`.
"""

import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 3)


def attack(images, fixed):
    w = torch.atanh(images * 2 - 1).detach()
    w.requires_grad = True
    optimizer = torch.optim.Adam([w], lr=0.01)
    best_adv_images = images.clone().detach()
    for _ in range(3):
        adv_images = 0.5 * (torch.tanh(w) + 1)            # tanh saves its result for backward
        cost = model(adv_images).sum() + ((adv_images - images) ** 2).sum()
        optimizer.zero_grad()
        cost.backward()                                     # frees the saved tensors of this step's graph
        optimizer.step()
        mask = torch.ones(len(images), dtype=torch.bool)
        best_adv_images[mask] = adv_images[mask]            # in-place copy records IndexPutBackward
    if fixed:
        return best_adv_images.clone().detach()             # the fix
    return best_adv_images                                  # buggy


images = torch.rand(2, 4) * 0.8 + 0.1
labels = torch.tensor([0, 1])

adv = attack(images, fixed=False)
assert adv.requires_grad and adv.grad_fn is not None
loss = torch.nn.functional.cross_entropy(model(adv), labels)   # adversarial training step
try:
    loss.backward()
    raise AssertionError("expected backward to raise")
except RuntimeError as exc:
    assert "backward through the graph a second time" in str(exc), exc

adv = attack(images, fixed=True)
assert not adv.requires_grad
torch.nn.functional.cross_entropy(model(adv), labels).backward()

print("CONFIRMED")
