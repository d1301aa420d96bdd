"""Reproduction for `deblurgan_backward_twice`: KupynOrest/DeblurGAN commit 00f6ab1e30 ("Fix Backward twice ERROR").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `self.loss_D.backward()` frees the graph through the generator's output, which the generator's loss then backwards through again: "Trying to backward through the graph a second time"; the fix passes `retain_graph=True`.
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

netG = torch.nn.Linear(4, 4)
netD = torch.nn.Linear(4, 1)

def run(retain):
    real_A = torch.randn(2, 4)
    fake_B = torch.tanh(netG(real_A))                 # `self.fake_B = self.netG.forward(self.real_A)`
    loss_D = torch.sigmoid(netD(fake_B)).mean()       # the discriminator loss uses fake_B without detach
    loss_D.backward(retain_graph=retain)              # `self.loss_D.backward()`
    loss_G = -torch.sigmoid(netD(fake_B)).mean() + (fake_B ** 2).mean()
    loss_G.backward()                                 # backward_G goes through fake_B's freed graph

raises(lambda: run(False), "Trying to backward through the graph a second time")
run(True)

print("CONFIRMED")
