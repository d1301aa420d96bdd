"""Reproduction for `yolov7_detect_preds_keep_graph`: WongKinYiu/yolov7 commit 38544a3 ("solved memory leak issue during inference").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the wrapper class is decorated with `@torch.no_grad()`, which only wraps construction, so
`_detect` runs the model in grad mode and `preds.append(features.cpu())` keeps every batch's graph
(and its saved activations) alive until the concatenated predictions are dropped; the fix appends
`features.detach().cpu()`.
"""

import warnings

import torch

warnings.simplefilter("ignore", FutureWarning)          # "Decorating classes is deprecated"


@torch.no_grad()
class Detector:
    def __init__(self):
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).eval()

    def _detect(self, batches, fixed):
        preds = []
        for batch in batches:
            features = self.model(batch)                  # not under no_grad: the decorator wrapped __init__ only
            preds.append(features.detach().cpu() if fixed else features.cpu())
        return torch.cat(preds, dim=0)


det = Detector()
batches = [torch.randn(3, 4) for _ in range(4)]

out = det._detect(batches, fixed=False)
assert torch.is_grad_enabled()
assert out.grad_fn is not None                          # buggy: every batch's graph is kept by the predictions
assert det._detect(batches, fixed=True).grad_fn is None

print("CONFIRMED")
