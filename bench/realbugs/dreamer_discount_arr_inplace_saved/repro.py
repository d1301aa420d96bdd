"""Reproduction for `dreamer_discount_arr_inplace_saved`: juliusfrost/dreamer-pytorch 1e1e2e20 (don't use in-place ops 'cuz gradients).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)
reward_model, value_model, actor = nn.Linear(4, 1), nn.Linear(4, 1), nn.Linear(4, 4)


def compute_return(reward, value, discount, bootstrap, lambda_):      # as in dreamer_algo.py
    next_values = torch.cat([value[1:], bootstrap[None]], 0)
    target = reward + discount * next_values * (1 - lambda_)
    outputs = []
    accumulated_reward = bootstrap
    for t in range(reward.shape[0] - 1, -1, -1):
        accumulated_reward = target[t] + discount[t] * lambda_ * accumulated_reward
        outputs.append(accumulated_reward)
    return torch.flip(torch.stack(outputs), [0])


def actor_loss(fixed):
    imag_feat = torch.tanh(actor(torch.randn(6, 3, 4)))
    imag_reward, value = reward_model(imag_feat), value_model(imag_feat)
    discount_arr = 0.99 * torch.ones_like(imag_reward)
    returns = compute_return(imag_reward[:-1], value[:-1], discount_arr[:-1], bootstrap=value[-1], lambda_=0.95)
    if fixed:
        discount_arr = torch.cat([torch.ones_like(discount_arr[:1]), discount_arr[1:]])
    else:
        discount_arr[0] = 1            # buggy: `discount * next_values` saved this storage
    discount = torch.cumprod(discount_arr[:-1], 0)
    return -torch.mean(discount * returns)


try:
    actor_loss(False).backward()
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "inplace operation" in str(e), e
actor_loss(True).backward()
print("CONFIRMED")
