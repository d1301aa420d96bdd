"""Reproduction for `torchgfn_replay_buffer_keeps_graph`: GFNOrg/torchgfn a6527802 (fix torch error Trying to backward through the graph a second time).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch


class ReplayBuffer:
    def __init__(self):
        self.log_probs = torch.zeros(0)

    def add(self, log_probs):                   # Trajectories.extend: torch.cat of the stored log_probs
        self.log_probs = torch.cat((self.log_probs, log_probs))

    def sample(self, n):
        return self.log_probs[torch.randperm(len(self.log_probs))[:n]]


def train(fixed, iterations=3):
    torch.manual_seed(0)
    logits = torch.nn.Parameter(torch.zeros(4))
    log_z = torch.nn.Parameter(torch.zeros(()))
    optimizer = torch.optim.SGD([logits, log_z], lr=0.1)
    replay_buffer = ReplayBuffer()
    for i in range(iterations):
        log_probs = torch.log_softmax(logits, -1)[torch.randint(0, 4, (3,))]     # sampled trajectories' log-probs
        if fixed:
            with torch.no_grad():
                replay_buffer.add(log_probs)
                training_objects = replay_buffer.sample(3)
        else:
            replay_buffer.add(log_probs)
            training_objects = replay_buffer.sample(3)
        optimizer.zero_grad()
        loss = ((log_z + training_objects) ** 2).mean()     # on-policy TB loss uses the stored log-probs
        loss.backward()
        optimizer.step()


try:
    train(False)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "second time" in str(e), e
train(True)
print("CONFIRMED")
