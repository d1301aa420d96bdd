"""Reproduction for `slm_sac_log_alpha_clamp_graph`: kengz/SLM-Lab commit 2518cd21 ("clamp with detach").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: after each alpha step `self.log_alpha = self.log_alpha.clamp(-5, 4)` replaces the leaf with a clamp
output that keeps a graph back to the leaf; the next `alpha_loss.backward()` frees that clamp node, and the one
after goes through the chain of clamps again and raises "Trying to backward through the graph a second time". The fix makes a fresh leaf
(`.clone().detach().requires_grad_(True)`).
"""

import torch

log_alpha_leaf = torch.zeros(1, requires_grad=True)


def train(fixed, steps=4):
    global log_alpha_leaf
    log_alpha_leaf = torch.zeros(1, requires_grad=True)
    log_alpha = log_alpha_leaf
    opt = torch.optim.SGD([log_alpha_leaf], lr=0.1)
    for _ in range(steps):
        log_probs = torch.randn(8)
        alpha_loss = -(log_alpha * (log_probs.detach() - 1.0)).mean()
        opt.zero_grad()
        alpha_loss.backward()
        opt.step()
        if fixed:
            log_alpha = log_alpha.clamp(-5, 4).clone().detach().requires_grad_(True)   # the fix
        else:
            log_alpha = log_alpha.clamp(-5, 4)


try:
    train(False)
    raise AssertionError("expected an error")
except RuntimeError as e:
    assert "backward through the graph a second time" in str(e), e
train(True)
print("CONFIRMED")
