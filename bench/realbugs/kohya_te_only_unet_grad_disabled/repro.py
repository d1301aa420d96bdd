"""Reproduction for `kohya_te_only_unet_grad_disabled`: kohya-ss/sd-scripts commit 86a2f3fd ("Fix gradient handling when Text Encoders are trained").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the U-Net/DiT call runs under `torch.set_grad_enabled(is_train and train_unet)`; when only the text
encoder (LoRA) is trained, train_unet is False, so the graph from the text-encoder conditioning through the
U-Net is not recorded and `loss.backward()` raises (the text encoder can never receive a gradient); the fix
enables grad whenever `is_train`.
"""

import torch

torch.manual_seed(0)
text_encoder = torch.nn.Linear(4, 4)                       # trained (LoRA on the text encoder)
unet = torch.nn.Linear(8, 4).requires_grad_(False)          # frozen U-Net
is_train, train_unet = True, False                          # --network_train_text_encoder_only


def loss_of(fixed):
    text_encoder.zero_grad()
    conds = text_encoder(torch.randn(2, 4))
    noisy_latents = torch.randn(2, 4)
    with torch.set_grad_enabled(is_train if fixed else (is_train and train_unet)):
        noise_pred = unet(torch.cat([noisy_latents, conds], 1))
    return torch.nn.functional.mse_loss(noise_pred, torch.randn(2, 4))


try:
    loss_of(False).backward()
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "does not require grad" in str(e), e
loss_of(True).backward()
assert text_encoder.weight.grad is not None and text_encoder.weight.grad.abs().sum() > 0
print("CONFIRMED")
