"""Reproduction for `monai_ssim_loss_no_grad`: Project-MONAI/MONAI commit af44576f52 ("Resolves non-gradient bug of SSIM Loss (#5686)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `SSIMLoss.forward` computes the value through `SSIMMetric(...)(x, y)`, whose `__call__` detaches/works without grad, so the loss has no gradient ("element 0 of tensors does not require grad" on backward); the fix calls `_compute_tensor`.
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

class SSIMMetric:
    def __call__(self, x, y):
        with torch.no_grad():                      # a metric's __call__ computes without a graph
            return self._compute_tensor(x, y)
    def _compute_tensor(self, x, y):
        return 1 - ((x - y) ** 2).mean()

def run(fixed):
    x = torch.rand(1, 1, 4, 4, requires_grad=True)
    y = torch.rand(1, 1, 4, 4)
    ssim_value = SSIMMetric()._compute_tensor(x, y) if fixed else SSIMMetric()(x, y)
    (1 - ssim_value).backward()

raises(lambda: run(False), "element 0 of tensors does not require grad and does not have a grad_fn")
run(True)

print("CONFIRMED")
