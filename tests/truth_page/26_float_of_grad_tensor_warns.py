import warnings

import torch

x = torch.ones(3, requires_grad=True)
loss = (x ** 2).sum()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    value = float(loss)
messages = [str(w.message) for w in caught]
