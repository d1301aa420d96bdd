"""Reproduction for `ta_deepfool_requires_grad_nonleaf`: Harry24k/adversarial-attacks-pytorch commit e4c0935 ("Fix can't change requires_grad for non leaf variables").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: DeepFool sets `image.requires_grad = True` and, on early stop, returns that image, so its
result requires grad; SparseFool computes `adv_image = image + lam*(adv_image - image)` from it (a
non-leaf) and then sets `adv_image.requires_grad = True`, which raises "you can only change
requires_grad flags of leaf variables". The fix detaches DeepFool's result before returning it.
"""

import torch

model = torch.nn.Linear(4, 3)


def deepfool(images, fixed):
    images = images.clone().detach()
    adv_images = None
    for image in images:
        adv_image = torch.unsqueeze(image, 0)
        adv_image.requires_grad = True                    # as in _forward_indiv
        model(adv_image)                                  # early stop: the image itself is returned
        adv_images = adv_image if adv_images is None else torch.cat((adv_images, adv_image), 0)
    if fixed:
        adv_images = adv_images.detach()                  # the fix
    return adv_images


image = torch.rand(1, 4)
lam = 3.0

adv_image = deepfool(image, fixed=False)
adv_image = image + lam * (adv_image - image)             # SparseFool
try:
    adv_image.requires_grad = True
    raise AssertionError("expected setting requires_grad to raise")
except RuntimeError as exc:
    assert "you can only change requires_grad flags of leaf variables" in str(exc), exc

adv_image = deepfool(image, fixed=True)
adv_image = image + lam * (adv_image - image)
adv_image.requires_grad = True
fs = model(adv_image)[0]
grad = torch.autograd.grad(fs[0] - fs[1], adv_image)[0]
assert grad.shape == adv_image.shape

print("CONFIRMED")
