"""Reproduction for `allennlp_covariance_inplace_mask`: allenai/allennlp commit 4b6f8d1651 ("Remove inplace modification in Covariance (#1691)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `predictions *= mask` multiplies in place the caller's predictions (the metric only detached them, which shares storage and the version counter), so the model output is silently changed and a backward that saved it raises "modified by an inplace operation"; the fix multiplies out of place.
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

def run(inplace):
    w = torch.randn(4, requires_grad=True)
    predictions = torch.sigmoid(w)                 # sigmoid saves its output for backward
    metric_view = predictions.detach()             # the metric's `unwrap_to_tensors` detaches (shares storage)
    mask = torch.tensor([1.0, 0.0, 1.0, 1.0])
    if inplace:
        metric_view *= mask
    else:
        metric_view = metric_view * mask
    predictions.sum().backward()

raises(lambda: run(True), "modified by an inplace operation")
run(False)

print("CONFIRMED")
