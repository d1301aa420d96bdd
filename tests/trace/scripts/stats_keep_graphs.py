# expect: GS912 line 20 (the entropy with its graph is kept in a stats dict that a history list keeps)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
policy = nn.Linear(6, 3)
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
history = []
for step in range(8):
    obs = torch.randn(32, 6)
    logp_all = F.log_softmax(policy(obs), dim=-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
    loss = -logp_all[:, 0].mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    stats = {}
    stats["loss"] = loss.item()
    stats["entropy"] = entropy
    history.append(stats)
print("kept graphs:", sum(s["entropy"].grad_fn is not None for s in history))
