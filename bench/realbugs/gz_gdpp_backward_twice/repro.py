"""Reproduction for `gz_gdpp_backward_twice`: facebookresearch/pytorch_GAN_zoo commit cccb9b3 ("fixed enable GDPP loss train").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `predFakeD, phiGFake = netD(predFakeG, True)`; `lossGFake.backward()` frees the shared graph, and the
GDPP loss on `phiGFake` then backwards through it again ("Trying to backward through the graph a second time");
the fix calls `lossGFake.backward(retain_graph=True)`.
"""

import torch

torch.manual_seed(0)
netG = torch.nn.Linear(4, 4)
feat = torch.nn.Linear(4, 4)
head = torch.nn.Linear(4, 1)


def step(fixed):
    predFakeG = netG(torch.randn(2, 4))
    phiGFake = torch.tanh(feat(predFakeG))
    predFakeD = head(phiGFake)
    lossGFake = -predFakeD.mean()
    if fixed:
        lossGFake.backward(retain_graph=True)           # the fix
    else:
        lossGFake.backward()
    phiDReal = torch.tanh(feat(torch.randn(2, 4)))
    gdpp = ((phiDReal - phiGFake) ** 2).mean()          # GDPP-style loss on the fake features
    gdpp.backward()


try:
    step(False)
    raise AssertionError("expected an error")
except RuntimeError as e:
    assert "backward through the graph a second time" in str(e)
step(True)
print("CONFIRMED")
