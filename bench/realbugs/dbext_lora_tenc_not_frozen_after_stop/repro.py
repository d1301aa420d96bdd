"""Reproduction for `dbext_lora_tenc_not_frozen_after_stop`: d8ahazard/sd_dreambooth_extension commit cd2c2da ("Fix LoRA requires_grad").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: with LoRA, when the text encoder should stop training (`train_tenc` False after its epochs, or
train_unet False for the U-Net), the parent never cleared requires_grad on the injected LoRA parameters, which stay
in the optimizer and still receive gradients from the (grad-enabled) forward, so the "frozen" part keeps being
trained; the fix sets requires_grad of the LoRA parameters to the train flag.
"""

import torch

torch.manual_seed(0)
base = torch.nn.Linear(4, 4).requires_grad_(False)          # text encoder, frozen
lora = torch.nn.Linear(4, 4, bias=False)                     # injected LoRA, trainable
unet = torch.nn.Linear(4, 1)
opt = torch.optim.AdamW(list(lora.parameters()) + list(unet.parameters()), lr=1e-2)


def epoch(fixed, train_tenc):
    if fixed:
        for p in lora.parameters():                          # set_lora_requires_grad(text_encoder, train_tenc)
            p.requires_grad = train_tenc
    before = lora.weight.detach().clone()
    x = torch.randn(8, 4)
    hidden = base(x) + lora(x)                               # encode_hidden_state runs with grad
    loss = unet(hidden).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return not torch.equal(before, lora.weight.detach())


epoch(False, True)
assert epoch(False, False)          # buggy: the text encoder LoRA still changes after its stop epoch
assert not epoch(True, False)       # fixed: frozen LoRA gets no grad and stays put
print("CONFIRMED")
