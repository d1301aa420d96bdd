"""Reproduction for `pyg_dense_to_sparse_inplace`: pyg-team/pytorch_geometric commit ac3a8e7289 ("Fix dense_to_sparse backward pass for three-dimensional input").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `edge_index[1] += offset[edge_index[0]]` modifies in place the index tensor that the preceding advanced indexing `adj[edge_index...]` saved for backward, so backward raises "modified by an inplace operation".
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
    adj = torch.rand(2, 3, 3, requires_grad=True)
    flatadj = adj.view(-1, 3)
    edge_index = (flatadj > -1).nonzero().t()
    edge_attr = flatadj[edge_index[0], edge_index[1]]   # indexing saves edge_index for backward
    offset = torch.tensor([0, 3])
    batch_of_row = edge_index[0] // 3
    if inplace:
        edge_index[1] += offset[batch_of_row]
    else:
        row, col = edge_index[0], edge_index[1]
        edge_index = torch.stack([row, col + offset[batch_of_row]], dim=0)
    edge_attr.sum().backward()

raises(lambda: run(True), "modified by an inplace operation")
run(False)

print("CONFIRMED")
