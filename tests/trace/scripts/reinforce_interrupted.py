# expect: no GS912 (an episode's log-probs are collected for a backward the crash prevents: not a leak)
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Linear(4, 2)
opt = torch.optim.SGD(policy.parameters(), lr=0.01)
for episode in range(3):
    log_probs = []
    for t in range(10):
        dist = torch.distributions.Categorical(logits=policy(torch.randn(4)))
        log_probs.append(dist.log_prob(dist.sample()))
        if episode == 0 and t == 6:
            raise RuntimeError("the environment crashed")
    loss = -torch.stack(log_probs).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
