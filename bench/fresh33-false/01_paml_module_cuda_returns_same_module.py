"""fresh33 false: HLTCHKUST/PAML model/transformer.py:284, 285, 286, 288 (GS504 x4).

`Transformer.__init__` builds `self.optimizer = torch.optim.Adam(self.parameters(), lr=config.lr)` (or NoamOpt over
Adam, or SGD: lines 267-271), then, under `if (config.USE_CUDA):`, rebinds
`self.encoder = self.encoder.cuda()`, `self.decoder = self.decoder.cuda()`, `self.generator = self.generator.cuda()`,
`self.embedding = self.embedding.cuda()` (lines 284-288). gradsight says the optimizer "holds the old parameters:
step() never updates the new self.encoder". But `nn.Module.cuda()` moves the module in place and returns `self`:
`_apply` replaces each parameter's `.data` and keeps the Parameter objects, so the rebinding assigns the same module
and the optimizer still holds exactly the module's parameters.

This machine has no GPU, so the real `nn.Module.cuda` is run with `torch.Tensor.cuda` stood in by a copying function
(a device move returns a new tensor, as this one does); `Module.cuda`, `_apply` and the optimizer are torch's own.
If a GPU is present the real `.cuda()` is used. Asserts: `.cuda()` returns the same module object, the parameter
objects are unchanged, every optimizer parameter is a model parameter, and `optimizer.step()` changes the weights of
the rebound encoder, decoder, generator and embedding.
"""
import torch
from torch import nn

use_gpu = torch.cuda.is_available()
if not use_gpu:
    torch.Tensor.cuda = lambda self, device=None, non_blocking=False, **kw: self.clone()


class Transformer(nn.Module):            # the shape of PAML's model/transformer.py:235-292
    def __init__(self, vocab_size=50, emb_dim=16, hidden_dim=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.encoder = nn.Sequential(nn.Linear(emb_dim, hidden_dim), nn.ReLU())
        self.decoder = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU())
        self.generator = nn.Linear(hidden_dim, vocab_size)
        self.generator.weight = self.embedding.weight          # config.weight_sharing
        self.criterion = nn.NLLLoss()
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-2)   # line 267
        ids_before = {name: id(p) for name, p in self.named_parameters()}
        enc_before = self.encoder
        # lines 284-288 (USE_CUDA)
        self.encoder = self.encoder.cuda()
        self.decoder = self.decoder.cuda()
        self.generator = self.generator.cuda()
        self.criterion = self.criterion.cuda()
        self.embedding = self.embedding.cuda()
        assert self.encoder is enc_before, ".cuda() returned another module"
        assert {name: id(p) for name, p in self.named_parameters()} == ids_before, "parameter objects replaced"

    def forward(self, x):
        return torch.log_softmax(self.generator(self.decoder(self.encoder(self.embedding(x)))), -1)


model = Transformer()
dev = "cuda" if use_gpu else "cpu"
opt_ids = {id(p) for g in model.optimizer.param_groups for p in g["params"]}
assert opt_ids == {id(p) for p in model.parameters()}, "optimizer holds other tensors than the model's"
before = {n: p.detach().clone() for n, p in model.named_parameters()}
x = torch.randint(0, 50, (8,), device=dev)
loss = model.criterion(model(x), torch.randint(0, 50, (8,), device=dev))
model.optimizer.zero_grad(); loss.backward(); model.optimizer.step()
changed = {n: not torch.equal(before[n], p.detach()) for n, p in model.named_parameters()}
print("gpu" if use_gpu else "cpu (Tensor.cuda stood in)", changed)
assert all(changed.values()), "some rebound submodule was not updated by step()"
print("OK: .cuda() returns the same module; the optimizer updates encoder, decoder, generator and embedding")
