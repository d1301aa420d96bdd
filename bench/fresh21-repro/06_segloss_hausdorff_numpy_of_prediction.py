"""fresh21 real: JunMa11/SegLoss losses_pytorch/hausdorff.py:58, 162, 168 (GS201).

The repository's HausdorffDTLoss and HausdorffERLoss (hausdorff.py:19-173), unchanged but for imports. Used as a
loss, `pred` is a network output that requires grad, and `pred.cpu().numpy()` (line 58 in HausdorffDTLoss.forward,
162 and 168 in HausdorffERLoss.forward's debug and normal branches) raises "Can't call numpy() on Tensor that
requires grad". scipy's edt/convolve are replaced by stand-ins (not installed here; never reached). (The distance fields are constants anyway, so only `(pred - target) ** 2` would carry gradient.)
"""
import numpy as np
import torch
from torch import nn

# scipy is not installed here: stand-ins with the same signatures (the raise happens before either is called).
def edt(mask):
    return mask.astype(np.float64)


def convolve(a, kernel, mode="constant", cval=0.0):
    return a


class HausdorffDTLoss(nn.Module):
    def __init__(self, alpha=2.0, **kwargs):
        super().__init__()
        self.alpha = alpha

    @torch.no_grad()
    def distance_field(self, img):
        field = np.zeros_like(img)
        for batch in range(len(img)):
            fg_mask = img[batch] > 0.5
            if fg_mask.any():
                field[batch] = edt(fg_mask) + edt(~fg_mask)
        return field

    def forward(self, pred, target, debug=False):
        pred_dt = torch.from_numpy(self.distance_field(pred.cpu().numpy())).float()          # line 58
        target_dt = torch.from_numpy(self.distance_field(target.cpu().numpy())).float()
        pred_error = (pred - target) ** 2
        distance = pred_dt ** self.alpha + target_dt ** self.alpha
        dt_field = pred_error * distance
        loss = dt_field.mean()
        if debug:
            return (loss.cpu().numpy(), (dt_field.cpu().numpy()[0, 0], pred_error.cpu().numpy()[0, 0]))  # 69-72
        return loss


class HausdorffERLoss(nn.Module):
    def __init__(self, alpha=2.0, erosions=10, **kwargs):
        super().__init__()
        self.alpha, self.erosions = alpha, erosions
        bound = np.array([[[0, 0, 0], [0, 1, 0], [0, 0, 0]]])
        cross = np.array([[[0, 1, 0], [1, 1, 1], [0, 1, 0]]], dtype=np.uint8)
        self.kernel2D = cross * 0.2
        self.kernel3D = np.array([bound, cross, bound]) * (1 / 7)

    @torch.no_grad()
    def perform_erosion(self, pred, target, debug):
        bound = (pred - target) ** 2
        kernel = self.kernel3D if bound.ndim == 5 else self.kernel2D
        eroted = np.zeros_like(bound)
        erosions = []
        for batch in range(len(bound)):
            erosions.append(np.copy(bound[batch][0]))
            for k in range(self.erosions):
                dilation = convolve(bound[batch], kernel, mode="constant", cval=0.0)
                erosion = dilation - 0.5
                erosion[erosion < 0] = 0
                if np.ptp(erosion) != 0:
                    erosion = (erosion - erosion.min()) / np.ptp(erosion)
                bound[batch] = erosion
                eroted[batch] += erosion * (k + 1) ** self.alpha
        return (eroted, erosions) if debug else eroted

    def forward(self, pred, target, debug=False):
        if debug:
            eroted, erosions = self.perform_erosion(pred.cpu().numpy(), target.cpu().numpy(), debug)   # line 162
            return eroted.mean(), erosions
        eroted = torch.from_numpy(
            self.perform_erosion(pred.cpu().numpy(), target.cpu().numpy(), debug)).float()           # line 168
        return eroted.mean()


torch.manual_seed(0)
net = nn.Conv2d(1, 1, 3, padding=1)
img, target = torch.randn(2, 1, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float()
for name, call in (("DT line 58", lambda p: HausdorffDTLoss()(p, target)),
                   ("ER line 162 (debug)", lambda p: HausdorffERLoss()(p, target, debug=True)),
                   ("ER line 168", lambda p: HausdorffERLoss()(p, target))):
    pred = torch.sigmoid(net(img))
    try:
        call(pred)
        raise SystemExit(f"{name}: no error: unexpected")
    except RuntimeError as e:
        assert "requires grad" in str(e), e
        print(f"{name}: raised: {str(e)[:80]}")
print("OK: each loss raises on a prediction that requires grad")
