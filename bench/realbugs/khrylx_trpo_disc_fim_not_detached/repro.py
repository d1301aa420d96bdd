"""Reproduction for `khrylx_trpo_disc_fim_not_detached`: Khrylx/PyTorch-RL c9fade2 (small fix.).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Softmax(dim=-1))
states = torch.randn(5, 3)
params = list(net.parameters())


def flat_grad(out, create_graph=False):
    return torch.cat([g.reshape(-1) for g in torch.autograd.grad(out, params, create_graph=create_graph)])


def fvp(v, fixed):
    action_prob = net(states)
    M = action_prob.pow(-1).view(-1)
    if fixed:
        M = M.detach()
    mu = action_prob.view(-1)
    t = torch.ones(mu.size(), requires_grad=True)
    Jt = flat_grad((mu * t).sum(), create_graph=True)
    Jv = torch.autograd.grad((Jt * v).sum(), t)[0]
    MJv = M * Jv.detach()
    return flat_grad((MJv * mu).sum()).detach()


v = torch.randn(sum(p.numel() for p in params))
# the Fisher-vector product J^T M J v with M held constant
J = torch.autograd.functional.jacobian(lambda *ps: torch.func.functional_call(net, dict(zip([n for n, _ in net.named_parameters()], ps)), (states,)).reshape(-1), tuple(params))
J = torch.cat([j.reshape(j.shape[0], -1) for j in J], 1)
M = net(states).detach().pow(-1).reshape(-1)
expected = J.T @ (M * (J @ v))
assert torch.allclose(fvp(v, True), expected, atol=1e-4)
assert not torch.allclose(fvp(v, False), expected, atol=1e-4)      # the extra dM/dtheta term
print("CONFIRMED")
