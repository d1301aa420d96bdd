# From NVIDIA/BigVGAN alias_free_activation/cuda/activation1d.py:32 (fresh7, first try at d79ed50).
# Finding: GS411 "`backward` returns 3 gradients but `forward` takes 5 inputs; backward raises."
# Why wrong: `backward` starts with `raise NotImplementedError` (the fused CUDA kernel is for inference only);
# the `return` with 3 values is unreachable, so its count never matters. The repository calls the Function
# only for inference, as below.
import torch


class FusedAntiAliasActivation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, up_ftr, down_ftr, alpha, beta):
        activation_results = inputs * alpha.exp() + beta
        return activation_results

    @staticmethod
    def backward(ctx, output_grads):
        raise NotImplementedError
        return output_grads, None, None


x = torch.randn(2, 3)
with torch.no_grad():
    y = FusedAntiAliasActivation.apply(x, torch.ones(3), torch.ones(3), torch.zeros(1), torch.zeros(1))
print("ok", tuple(y.shape))
