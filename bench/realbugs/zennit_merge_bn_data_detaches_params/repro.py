"""Reproduction for `zennit_merge_bn_data_detaches_params`: chr5tphr/zennit commit c30e3cc ("Canonizers/ParamMod: Fix Gradients for Parameters").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: MergeBatchNorm folded the batch norm into the linear layer through `.data` assignments
(`module.weight.data = original_weight * scale`, `batch_norm.weight.data = ones`), which detaches the merge from
the graph: gradients w.r.t. the parameters of a canonized model are taken w.r.t. the merged values, not the
original linear/batch-norm parameters (the batch-norm weight gets no real gradient at all); the fix sets the
attributes to tensors computed from the original parameters (object.__setattr__), so gradients reach them.
"""

import torch

torch.manual_seed(0)


def make():
    torch.manual_seed(1)
    lin, bn = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 2.0); bn.bias.uniform_(-1, 1)
        bn.running_mean.uniform_(-1, 1); bn.running_var.uniform_(0.5, 2.0)
    return lin, bn.eval()


x = torch.randn(5, 3)

# reference: the true gradient of the un-canonized model w.r.t. its parameters
lin, bn = make()
bn(lin(x)).pow(2).sum().backward()
ref_w, ref_bnw = lin.weight.grad.clone(), bn.weight.grad.clone()

# buggy: merge through .data
lin, bn = make()
scale = bn.weight / (bn.running_var + bn.eps) ** .5
lin.weight.data = lin.weight.data * scale[:, None]
lin.bias.data = (lin.bias.data - bn.running_mean) * scale + bn.bias
bn.running_mean.data = torch.zeros_like(bn.running_mean.data)
bn.running_var.data = torch.ones_like(bn.running_var.data)
bn.bias.data = torch.zeros_like(bn.bias.data)
bn.weight.data = torch.ones_like(bn.weight.data)
bn(lin(x)).pow(2).sum().backward()
assert not torch.allclose(lin.weight.grad, ref_w, atol=1e-4)       # gradient w.r.t. the wrong tensor
assert not torch.allclose(bn.weight.grad, ref_bnw, atol=1e-4)

# fixed: merged weights are tensors computed from the original parameters
lin, bn = make()
orig_w, orig_b, orig_bnw, orig_bnb = lin.weight, lin.bias, bn.weight, bn.bias
scale = bn.weight / (bn.running_var + bn.eps) ** .5
object.__setattr__(lin, "weight", lin.weight * scale[:, None])
object.__setattr__(lin, "bias", (lin.bias - bn.running_mean) * scale + bn.bias)
for key, func in zip(("running_mean", "running_var", "bias", "weight", "eps"),
                     (*(torch.zeros_like, torch.ones_like) * 2, lambda _: 0.)):
    object.__setattr__(bn, key, func(getattr(bn, key)))
bn(lin(x)).pow(2).sum().backward()
assert torch.allclose(orig_w.grad, ref_w, atol=1e-4)
assert torch.allclose(orig_bnw.grad, ref_bnw, atol=1e-4)
print("CONFIRMED")
