"""Reproduction for `tts_torchstft_no_grad_cuts_loss`: coqui-ai/TTS commit d295d5de ("remove torch.no_grad from TorchSTFT").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `TorchSTFT.__call__` was decorated with `@torch.no_grad()`, but the vocoder generator losses
(STFTLoss / MultiScaleSTFTLoss / L1SpecLoss) compute the spectrogram of the generated waveform with it, so
those loss terms carry no graph and the generator silently gets no gradient from them (or backward raises when
they are the only terms). The fix removes the decorator.
"""

import torch
from torch import nn
from torch.nn import functional as F


class TorchSTFT(nn.Module):
    def __init__(self, n_fft, hop, win, no_grad):
        super().__init__()
        self.n_fft, self.hop, self.win = n_fft, hop, win
        self.window = nn.Parameter(torch.hann_window(win), requires_grad=False)
        if no_grad:
            self.forward = torch.no_grad()(self.forward)       # buggy: @torch.no_grad()

    def forward(self, x):
        o = torch.view_as_real(torch.stft(x, self.n_fft, self.hop, self.win, self.window,
                                          center=True, pad_mode="reflect", return_complex=True))
        return torch.sqrt(torch.clamp(o[..., 0] ** 2 + o[..., 1] ** 2, min=1e-8))


def stft_loss(stft, y_hat, y):
    y_hat_M, y_M = stft(y_hat), stft(y)
    loss_mag = F.l1_loss(torch.log(y_M), torch.log(y_hat_M))
    loss_sc = torch.norm(y_M - y_hat_M, p="fro") / torch.norm(y_M, p="fro")
    return loss_mag, loss_sc


torch.manual_seed(0)
generator = nn.Linear(16, 256)
z, y = torch.randn(2, 16), torch.randn(2, 256)

# buggy: the spectral loss has no graph at all
y_hat = generator(z)
loss_mag, loss_sc = stft_loss(TorchSTFT(64, 16, 64, no_grad=True), y_hat, y)
assert not loss_mag.requires_grad and not loss_sc.requires_grad
try:
    (loss_mag + loss_sc).backward()
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "does not require grad" in str(e), e

# fixed: the spectral loss trains the generator
loss_mag, loss_sc = stft_loss(TorchSTFT(64, 16, 64, no_grad=False), generator(z), y)
(loss_mag + loss_sc).backward()
assert generator.weight.grad is not None and generator.weight.grad.abs().sum() > 0

print("CONFIRMED")
