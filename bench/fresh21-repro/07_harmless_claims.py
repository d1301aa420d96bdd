"""fresh21 harmless claims: the statement does what gradsight says, the consequence never happens.

A. junfu1115/DANet encoding/nn/attention.py:109 (GS212): `attn.view(b_, n_head, h_*w_, -1)` in `ACFModule.demo`
   throws its result away, so `demo` returns the (b*n_head, N, N2) attention instead of (b, n_head, N, N2). True
   (run below with MixtureOfSoftMaxACF's shapes), but no file calls a model's `demo` (atten.py:48 and :128 only
   forward it); training and testing use `forward`.
B. JunMa11/SegLoss losses_pytorch/hausdorff.py:69, 71, 72 (GS201): the debug return of HausdorffDTLoss calls
   `.numpy()` on `loss`, `dt_field`, `pred_error`, which require grad when `pred` does. But line 58,
   `pred.cpu().numpy()`, runs first in the same call and raises for every `pred` that requires grad, so no run reaches
   line 69 with such a `pred`; with a `pred` that does not require grad, the debug return works.
"""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)

# A
b_, n_head, h_, w_, d_k = 2, 4, 3, 3, 8
qt = torch.randn(b_ * n_head, d_k, h_ * w_)
attn = torch.softmax(torch.bmm(qt.transpose(1, 2), qt), dim=2)      # {B*m, N, N}, as MixtureOfSoftMaxACF
attn.view(b_, n_head, h_ * w_, -1)                                   # attention.py:109, result discarded
assert attn.shape == (b_ * n_head, h_ * w_, h_ * w_)
print("A: demo's attn keeps shape", tuple(attn.shape), "(the view was thrown away); no caller of demo")


# B
class HausdorffDTLoss(nn.Module):
    def __init__(self, alpha=2.0):
        super().__init__()
        self.alpha = alpha

    @torch.no_grad()
    def distance_field(self, img):
        return np.where(img > 0.5, 1.0, 2.0).astype(img.dtype)    # stand-in for edt (scipy not installed)

    def forward(self, pred, target, debug=False):
        pred_dt = torch.from_numpy(self.distance_field(pred.cpu().numpy())).float()          # line 58
        target_dt = torch.from_numpy(self.distance_field(target.cpu().numpy())).float()
        pred_error = (pred - target) ** 2
        distance = pred_dt ** self.alpha + target_dt ** self.alpha
        dt_field = pred_error * distance
        loss = dt_field.mean()
        if debug:
            return (loss.cpu().numpy(),                                                        # line 69
                    (dt_field.cpu().numpy()[0, 0], pred_error.cpu().numpy()[0, 0]))          # lines 71, 72
        return loss


net = nn.Conv2d(1, 1, 3, padding=1)
img, target = torch.randn(2, 1, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float()
reached = []
try:
    HausdorffDTLoss()(torch.sigmoid(net(img)), target, debug=True)
except RuntimeError as e:
    import traceback
    line = traceback.extract_tb(e.__traceback__)[-1].line
    print("B: with a pred that requires grad it raises at:", line.strip()[:60])
    assert "pred.cpu().numpy()" in line
with torch.no_grad():
    out = HausdorffDTLoss()(torch.sigmoid(net(img)), target, debug=True)
print("B: with a pred that does not require grad the debug return works:", type(out[0]).__name__)
print("OK")
