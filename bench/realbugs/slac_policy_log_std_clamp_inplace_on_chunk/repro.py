"""Reproduction for `slac_policy_log_std_clamp_inplace_on_chunk`: toshikwa/slac.pytorch 8b9d520a (Remove unnecessary inplace operation).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import math

import torch
from torch import nn

torch.manual_seed(0)


def reparameterize(mean, log_std):
    noise = torch.randn_like(mean)
    action = torch.tanh(mean + noise * log_std.exp())
    log_pi = (-0.5 * noise.pow(2) - log_std).sum(dim=-1, keepdim=True) - 0.5 * math.log(2 * math.pi) * log_std.size(-1)
    return action, log_pi - torch.log(1 - action.pow(2) + 1e-6).sum(dim=-1, keepdim=True)


class GaussianPolicy(torch.jit.ScriptModule):
    def __init__(self, fixed):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(inplace=True), nn.Linear(16, 4))
        self.fixed = fixed

    def sample(self, feature_action):
        mean, log_std = torch.chunk(self.net(feature_action), 2, dim=-1)
        if self.fixed:
            return reparameterize(mean, log_std.clamp(-20, 2))
        return reparameterize(mean, log_std.clamp_(-20, 2))        # buggy


try:
    action, log_pi = GaussianPolicy(False).sample(torch.randn(3, 6))
    (log_pi.mean() - action.mean()).backward()
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "modified inplace" in str(e), e
action, log_pi = GaussianPolicy(True).sample(torch.randn(3, 6))
(log_pi.mean() - action.mean()).backward()
print("CONFIRMED")
