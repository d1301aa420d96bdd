"""Reproduction for `torchtune_grpo_kl_both_detached`: pytorch/torchtune 957671cd (Fix messed up loss).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch

torch.manual_seed(0)
policy = torch.nn.Linear(4, 6)
x = torch.randn(3, 4)
ref_logprobs = torch.log_softmax(torch.randn(3, 6), -1)     # reference model output, no grad


def kl_grad(fixed):
    policy.zero_grad()
    pi_logprobs = torch.log_softmax(policy(x), -1)
    if fixed:
        per_token_kl = torch.exp(ref_logprobs.detach() - pi_logprobs) - (ref_logprobs.detach() - pi_logprobs) - 1
    else:
        per_token_kl = torch.exp(pi_logprobs.detach() - ref_logprobs) - (pi_logprobs.detach() - ref_logprobs) - 1
    loss = 0.1 * per_token_kl.mean() + 0.0 * pi_logprobs.sum()      # the rest of the GRPO loss keeps a graph
    loss.backward()
    return policy.weight.grad.abs().sum().item()


assert kl_grad(False) == 0.0          # the KL term contributes no gradient
assert kl_grad(True) > 0.0
print("CONFIRMED")
