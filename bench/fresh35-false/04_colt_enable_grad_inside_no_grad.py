"""fresh35 false: eth-sri/colt code/milp.py:524 and code/verify.py:250 (GS109 x2).

"This `no_grad` block calls `get_adv_loss`, which differentiates a value it computes, so that raises. It does so
through `attack_layer`." Both scripts run their test loop under `with torch.no_grad():`, but every call that
differentiates (`get_adv_loss`, `learn_slopes`) is written inside `with torch.enable_grad():` in that block
(milp.py 549, 568, 571, 588; verify.py 273, 298, 303). `enable_grad` turns grad mode back on, so the backward in
`attack_layer` (a PGD loop over fresh `requires_grad_(True)` error terms) works. attack_layer's core, verbatim shape.
"""
import torch
import torch.nn.functional as F


def attack_layer(net, inputs, targets, n_steps, step_size):
    adv_errors = []
    for it in range(n_steps):
        net.zero_grad()
        if it == 0:
            adv_errors = [torch.FloatTensor(inputs.size()).uniform_(-1, 1).requires_grad_(True)]
        latent = inputs + 0.1 * adv_errors[0]
        ce_loss = F.cross_entropy(net(latent), targets)
        ce_loss.backward()
        adv_errors[0].data = torch.clamp(adv_errors[0].data + step_size * adv_errors[0].grad.sign(), -1, 1)
        adv_errors[0].grad.zero_()
    return (inputs + 0.1 * adv_errors[0]).detach()


def get_adv_loss(net, inputs, targets, n_steps, step_size):
    adv_latent = attack_layer(net, inputs, targets, n_steps, step_size)
    adv_outs = net(adv_latent)
    return F.cross_entropy(adv_outs, targets), targets.eq(adv_outs.max(dim=1)[1]).float().mean()


torch.manual_seed(0)
net = torch.nn.Linear(4, 3)
with torch.no_grad():
    for test_idx in range(3):
        inputs, targets = torch.randn(2, 4), torch.randint(0, 3, (2,))
        for _ in range(2):
            with torch.enable_grad():
                pgd_loss, pgd_ok = get_adv_loss(net, inputs, targets, 5, 0.1)
                if not pgd_ok:
                    break
try:
    with torch.no_grad():
        get_adv_loss(net, inputs, targets, 5, 0.1)       # only without enable_grad would it raise
except RuntimeError as e:
    assert "does not require grad" in str(e)
print("OK: the calls inside enable_grad() run; only a call without it raises")
