"""Reproduction for `allennlp_copynet_scatter_inplace`: allenai/allennlp commit c629093b6f ("CopyNet: replace in-place tensor operation with out-of-place equivalen").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `generation_log_probs.scatter_(...)` modifies in place a tensor that earlier `index_select`/`cat` steps saved (and that was already put in `modified_log_probs_list`), so backward raises "modified by an inplace operation"; the fix uses out-of-place `scatter`.
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
    w = torch.randn(2, 5, requires_grad=True)
    generation_log_probs = torch.log_softmax(w, dim=-1)   # log_softmax saves its output
    idx = torch.tensor([[1], [3]])
    combined = torch.zeros(2, 1)
    if inplace:
        generation_log_probs.scatter_(-1, idx, combined)
    else:
        generation_log_probs = generation_log_probs.scatter(-1, idx, combined)
    generation_log_probs.sum().backward()

raises(lambda: run(True), "modified by an inplace operation")
run(False)

print("CONFIRMED")
