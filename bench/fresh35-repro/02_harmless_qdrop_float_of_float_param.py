"""fresh35 harmless: wimh966/QDrop qdrop/quantization/fake_quant.py:216 (GS212).

`LSQPlusFakeQuantize.__init__` sets `self.zero_point = torch.nn.Parameter(torch.tensor([0.0], dtype=torch.float))`;
`forward` (observer off) runs `self.zero_point.data.clamp_(self.quant_min, self.quant_max).float()`. The `.float()`
result is dropped (true), but `clamp_` already clamped the parameter in place and `.float()` of a float32 tensor
returns the same tensor: nothing is lost. The message's "`self.zero_point.data.clamp_(...)` is unchanged" is wrong.
"""
import torch

zero_point = torch.nn.Parameter(torch.tensor([0.0], dtype=torch.float))
zero_point.data.fill_(300.0)
quant_min, quant_max = 0, 255
r = zero_point.data.clamp_(quant_min, quant_max)
assert r.float() is r                                   # .float() of float32: the same tensor
zero_point.data.clamp_(quant_min, quant_max).float()     # the statement, verbatim shape
assert zero_point.item() == 255.0 and zero_point.dtype == torch.float32
print("OK: clamp_ wrote the parameter in place; the dropped .float() changes nothing")
