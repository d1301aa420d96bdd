"""fresh18 (claim true, harmless here): GS411 Facico/Chinese-Vicuna `tools/quant/quant_linear.py:317`.

`QuantLinearFunction.forward(ctx, input, qweight, scales, qzeros, g_idx, bits, maxq, no_group)` takes 8 inputs and
`backward` returns 7 values: a backward through it raises. In the repository the quantized model is only used for
generation and evaluation (`tools/quant_generate.py`, `tools/quant_llama.py`); nothing backwards through it.
"""
import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, qweight, scales, qzeros, g_idx, bits, maxq, no_group):
        ctx.save_for_backward(qweight, scales)
        return input * scales

    @staticmethod
    def backward(ctx, grad_output):
        qweight, scales = ctx.saved_tensors
        grad_input = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output * scales
        return grad_input, None, None, None, None, None, None


x = torch.randn(3, requires_grad=True)
out = F.apply(x, torch.zeros(3, dtype=torch.int32), torch.ones(3), torch.zeros(3, dtype=torch.int32),
              torch.zeros(3, dtype=torch.int32), 4, 15, True)
try:
    out.sum().backward()
    print("no error")
except RuntimeError as e:
    print("backward raises:", str(e).split("\n")[0])
with torch.no_grad():                  # how the repository uses it: forward only
    print("inference forward fine:", F.apply(x, None, torch.ones(3), None, None, 4, 15, True).shape)
