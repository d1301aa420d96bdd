"""fresh16 (real): GS302 naacl_transfer_learning_tutorial `pretraining_model.py:9, 10` and decaNLP `models/common.py:244`.

The real statements: `create_sinusoidal_embeddings(embeds)` writes `embeds.weight[:, 0::2] = torch.sin(...)` before
it detaches the weight (run with `--sinusoidal_embeddings`), and decaNLP's `Highway.__init__` runs
`layer.bias[d_in:].fill_(1)` on an `nn.Linear` bias, both with grad mode on: each raises "a view of a leaf Variable
that requires grad is being used in an in-place operation".
"""
import numpy as np
import torch
import torch.nn as nn


def create_sinusoidal_embeddings(embeds):  # pretraining_model.py, as written
    position_enc = torch.tensor([
        [pos / np.power(10000, 2 * (j // 2) / embeds.embedding_dim) for j in range(embeds.embedding_dim)]
        for pos in range(embeds.num_embeddings)])
    embeds.weight[:, 0::2] = torch.sin(position_enc[:, 0::2])
    embeds.weight[:, 1::2] = torch.cos(position_enc[:, 1::2])
    embeds.weight.detach_()
    embeds.weight.requires_grad = False


def highway(d_in=4):  # decaNLP models/common.py Highway.__init__ (Linear is an nn.Linear subclass)
    layers = nn.ModuleList([nn.Linear(d_in, 2 * d_in)])
    for layer in layers:
        layer.bias[d_in:].fill_(1)


for f in (lambda: create_sinusoidal_embeddings(nn.Embedding(16, 8)), highway):
    try:
        f()
        print("no error")
    except RuntimeError as e:
        print("raises:", str(e).split("\n")[0][:100])
