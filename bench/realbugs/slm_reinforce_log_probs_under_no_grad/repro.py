"""Reproduction for `slm_reinforce_log_probs_under_no_grad`: kengz/SLM-Lab commit 5ad76ebb ("fix misuse of nograd and log prob append").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `body_act` samples under `torch.no_grad()` and stores `action_pd.log_prob(action).numpy()`, so the
REINFORCE loss summed from the saved log probs has no graph and `loss.backward()` raises "element 0 of
tensors does not require grad"; the fix acts with grad enabled and stores the log-prob tensors.
"""

import torch

torch.manual_seed(0)
net = torch.nn.Linear(3, 2)


def episode(fixed):
    saved_log_probs = []
    for _ in range(4):
        state = torch.randn(3)
        if fixed:
            pd = torch.distributions.Categorical(logits=net(state))
            action = pd.sample()
            saved_log_probs.append(pd.log_prob(action))                 # the fix
        else:
            with torch.no_grad():
                pd = torch.distributions.Categorical(logits=net(state))
                action = pd.sample()
                saved_log_probs.append(pd.log_prob(action).numpy())
    advantage = torch.randn(4)
    policy_loss = torch.tensor(0.0)
    for log_prob, a in zip(saved_log_probs, advantage):
        policy_loss = policy_loss + torch.as_tensor(-log_prob) * a
    net.zero_grad()
    policy_loss.backward()


try:
    episode(False)
    raise AssertionError("expected an error")
except RuntimeError as e:
    assert "does not require grad" in str(e), e
episode(True)
assert net.weight.grad.abs().sum() > 0
print("CONFIRMED")
