"""fresh35 real: SNAS-Series/SNAS-Series Analysis/snas/model_search.py:309..481 (GS301 x44).

In SNAS mode (`--snas`, not `--dsnas` / `--random_sample`) `_get_weights` is `_get_categ_mask`, whose result is the
output of `nn.Softmax`, which Softmax saves for its backward. Each `--fix_edge*` / `--del_edge*` option then runs
`normal_weights[k,:].zero_()` and `normal_weights[k, idx] = ...` on that output, and the training step's
`loss.backward()` goes back through the Softmax. Statements copied from the file, sizes small.
"""
import types

import torch
import torch.nn as nn


class Search(nn.Module):
    def __init__(self, args, k=14, num_ops=8):
        super().__init__()
        self.args = args
        self._temp = 1.0
        self.normal_log_alpha = nn.Parameter(torch.zeros(k, num_ops).normal_(1, 0.01))
        self.ops = nn.Parameter(torch.randn(k, num_ops))   # stands in for the cell's weighted ops

    def _get_categ_mask(self, log_alpha):
        u = torch.zeros_like(log_alpha).uniform_()
        softmax = torch.nn.Softmax(-1)
        one_hot = softmax((log_alpha + (-((-(u.log())).log()))) / self._temp)
        return one_hot

    def _get_onehot_mask(self, log_alpha):
        m = torch.distributions.one_hot_categorical.OneHotCategorical(probs=torch.softmax(log_alpha, dim=-1))
        return m.sample()

    def _get_weights(self, log_alpha):
        if self.args.dsnas or self.args.random_sample:
            return self._get_onehot_mask(log_alpha)
        else:
            return self._get_categ_mask(log_alpha)

    def forward(self):
        normal_weights = self._get_weights(self.normal_log_alpha)
        if self.args.fix_edge0_conv:                              # lines 307-309
            normal_weights[0, :].zero_()
            normal_weights[0, 4:] = self._get_weights(self.normal_log_alpha[0, 4:])
        if self.args.fix_edge0:                                   # lines 411-413
            normal_weights[0, :].zero_()
            normal_weights[0, 7] = 1
        return (self.ops * normal_weights).sum()


def step(**flags):
    args = types.SimpleNamespace(dsnas=False, random_sample=False, fix_edge0_conv=False, fix_edge0=False)
    args.__dict__.update(flags)
    torch.manual_seed(0)
    loss = Search(args)()
    loss.backward()


step(snas=True)                                   # no fix flag: trains
step(dsnas=True, fix_edge0_conv=True)             # DSNAS (the README's runs): a sample, no graph: trains
step(dsnas=True, fix_edge0=True)
for flag in ("fix_edge0_conv", "fix_edge0"):
    try:
        step(snas=True, **{flag: True})
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e), e
        print(f"--snas --{flag}: backward raises:", str(e)[:110])
    else:
        raise AssertionError("expected the in-place error")
print("OK: under --snas every --fix_edge*/--del_edge* option makes the step's backward raise")
