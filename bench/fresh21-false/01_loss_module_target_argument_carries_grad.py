"""fresh21 false: RITCHIEHuang/DeepRL_Algorithms Algorithms/pytorch/TD3/td3_step.py:22 (GS401).

Shape: a loss *module* called with the no-history tensor first and the tensor that requires grad second:
`nn.MSELoss()(target_values, values_1)`, where `target_values` was computed under `torch.no_grad()` and `values_1 =
value_net_1(states, actions)` outside it. MSE is symmetric and torch differentiates both arguments, so the loss has
history and `value_loss_1.backward()` (line 30) fills the critic's gradients. gradsight takes the module call's
output grad from the first argument only (the same call through `F.mse_loss`, or with the arguments swapped as in
ddpg_step.py, is quiet). The statements of td3_step's critic update with the repository's Value/Policy nets.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Value(nn.Module):
    def __init__(self, dim_state, dim_action, dim_hidden=32, activation=nn.LeakyReLU):
        super().__init__()
        self.value = nn.Sequential(nn.Linear(dim_state + dim_action, dim_hidden), activation(),
                                   nn.Linear(dim_hidden, dim_hidden), activation(), nn.Linear(dim_hidden, 1))

    def forward(self, states, actions):
        return self.value(torch.cat([states, actions], dim=1))


policy_net_target = nn.Sequential(nn.Linear(3, 32), nn.LeakyReLU(), nn.Linear(32, 1), nn.Tanh())
value_net_1, value_net_target_1 = Value(3, 1), Value(3, 1)
value_net_2, value_net_target_2 = Value(3, 1), Value(3, 1)
optimizer_value_1 = torch.optim.Adam(value_net_1.parameters(), lr=1e-3)
optimizer_value_2 = torch.optim.Adam(value_net_2.parameters(), lr=1e-3)
states, actions, next_states = torch.randn(16, 3), torch.randn(16, 1), torch.randn(16, 3)
rewards, masks = torch.randn(16).unsqueeze(-1), torch.ones(16).unsqueeze(-1)
gamma, action_high = 0.99, 1.0
with torch.no_grad():
    target_action = policy_net_target(next_states)
    target_action_noise = torch.clamp(torch.randn_like(target_action) * 0.2, -0.5, 0.5)
    target_action = torch.clamp(target_action + target_action_noise, -action_high, action_high)
    target_values = rewards + gamma * masks * torch.min(value_net_target_1(next_states, target_action),
                                                        value_net_target_2(next_states, target_action))
values_1 = value_net_1(states, actions)
value_loss_1 = nn.MSELoss()(target_values, values_1)
assert not target_values.requires_grad and value_loss_1.requires_grad
optimizer_value_1.zero_grad()
value_loss_1.backward()                       # td3_step.py:30, no error
optimizer_value_1.step()
assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in value_net_1.parameters())
values_2 = value_net_2(states, actions)
value_loss_2 = nn.MSELoss()(target_values, values_2)
optimizer_value_2.zero_grad()
value_loss_2.backward()                       # td3_step.py:38
optimizer_value_2.step()
print("OK: nn.MSELoss()(no_grad_target, prediction) has history; both critic backwards run and fill gradients")
