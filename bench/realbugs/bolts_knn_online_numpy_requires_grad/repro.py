"""Reproduction for `bolts_knn_online_numpy_requires_grad`: Lightning-Universe/lightning-bolts 6c63f0b9 (fix detatch).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch

torch.manual_seed(0)
pl_module = torch.nn.Linear(6, 4)


def get_all_representations(fixed, batches):
    all_representations = None
    for x in batches:
        if fixed:
            with torch.no_grad():
                representations = pl_module(x)
        else:
            representations = pl_module(x)
        representations = representations.reshape(representations.size(0), -1)
        if all_representations is None:
            all_representations = representations.detach()
        else:
            rep = representations.detach() if fixed else representations
            all_representations = torch.cat([all_representations, rep])
    return all_representations.cpu().numpy() if fixed else all_representations.numpy()


batches = [torch.randn(3, 6) for _ in range(2)]
try:
    get_all_representations(False, batches)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "requires grad" in str(e), e
get_all_representations(True, batches)
print("CONFIRMED")
