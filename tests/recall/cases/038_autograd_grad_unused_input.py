import torch

torch.manual_seed(0)
state = torch.randn(4, requires_grad=True)
noise = torch.randn(4, requires_grad=True)
perturbed = state * 2.0
loss = (perturbed - state.detach()).pow(2).sum()
g_state, g_noise = torch.autograd.grad(loss, [state, noise])  # root cause: noise never reaches loss
