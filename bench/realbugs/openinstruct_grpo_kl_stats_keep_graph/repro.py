"""Reproduction for `openinstruct_grpo_kl_stats_keep_graph`: allenai/open-instruct 514ba63a (Fix memory leak).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import gc
import weakref

import torch


def step(fixed):
    torch.manual_seed(0)
    policy = torch.nn.Linear(16, 16)
    kl2_stats = torch.zeros(8)
    refs = []
    for mb in range(4):
        inds = torch.arange(mb * 2, mb * 2 + 2)
        new_logprobs = torch.log_softmax(policy(torch.randn(2, 16)), -1)
        ref_logprobs_diff = (new_logprobs - torch.randn(2, 16)).clamp(-40.0, 40.0)
        kl1 = ref_logprobs_diff
        kl2 = ref_logprobs_diff ** 2 / 2          # saves ref_logprobs_diff; not part of the kl1 loss below
        refs.append(weakref.ref(ref_logprobs_diff))
        if fixed:
            loss = kl1.mean()
            loss.backward()
            with torch.no_grad():
                kl2_stats[inds] = kl2.sum(1).float()
        else:
            kl2_stats[inds] = kl2.sum(1).float()   # buggy: written in grad mode
            loss = kl1.mean()
            loss.backward()
        del new_logprobs, ref_logprobs_diff, kl1, kl2, loss
    gc.collect()
    return kl2_stats, sum(r() is not None for r in refs)


stats, alive = step(False)
assert stats.requires_grad and alive == 4, alive      # every microbatch's saved tensor is still held by the buffer
stats, alive = step(True)
assert not stats.requires_grad and alive == 0, alive
print("CONFIRMED")
