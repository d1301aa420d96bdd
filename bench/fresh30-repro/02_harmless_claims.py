"""fresh30 harmless: zhjohnchan/R2Gen modules/att_model.py:271 and :312 (GS301), both in `_diverse_sample`.

A  :271 `logprobs[:, prev_decisions] = logprobs[:, prev_decisions] - diversity_lambda` on `F.log_softmax`'s output
   (saved for backward): a backward through the result would raise (true).
B  :312 `it[~unfinished] = self.pad_idx` on the sampled indices that the 'gumbel' branch of `sample_next_word`
   gathered with (`logprobs.gather(1, it.unsqueeze(1))`, which saves the index): a backward through
   `sampleLogprobs` would raise (true).
The consequence is missing: `_diverse_sample` is reached only from `_sample` with `group_size > 1` (every script's
default is 1), `_sample` only from `mode='sample'`, and every `mode='sample'` call (trainer.py:210, 225;
tester.py:81, 110) is under `torch.no_grad()` and keeps only the token ids (`output, _ = ...` in r2gen.py:34, 44);
the training loss comes from `mode='forward'` (teacher forcing). Under no_grad nothing is saved, nothing raises.
"""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
W = torch.randn(8, 11, requires_grad=True)          # a stand-in for the decoder's logit layer
feats = torch.randn(4, 8)
pad_idx, eos_idx, diversity_lambda = 0, 0, 0.5


def diverse_step(divm, prev_decisions, sample_method):
    logprobs = F.log_softmax(feats @ W / 1.0, dim=-1)                   # att_model.py:263
    if divm > 0:
        logprobs[:, prev_decisions] = logprobs[:, prev_decisions] - diversity_lambda   # :271
    if sample_method == 'gumbel':                                        # caption_model.py:367-378
        y = logprobs + (-torch.log(-torch.log(torch.rand(logprobs.size()) + 1e-20) + 1e-20))
        _, it = torch.max(F.log_softmax(y, dim=-1).data, 1)
        sampleLogprobs = logprobs.gather(1, it.unsqueeze(1))
    else:
        sampleLogprobs, it = torch.max(logprobs.data, 1)
        it = it.view(-1).long()
    unfinished = torch.tensor([True, False, True, True])
    it[~unfinished] = pad_idx                                             # :312
    return it, sampleLogprobs


# A: with grad on, the :271 write breaks a backward through log_softmax
try:
    logprobs = F.log_softmax(feats @ W, dim=-1)
    logprobs[:, torch.tensor([2, 3])] = logprobs[:, torch.tensor([2, 3])] - diversity_lambda
    logprobs.sum().backward()
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("A: under grad, a backward through the diversity-penalised log_softmax raises (the claim is true)")
else:
    raise AssertionError

# B: with grad on, the :312 write to the gathered index breaks a backward through sampleLogprobs
it, sampleLogprobs = diverse_step(0, None, 'gumbel')
try:
    sampleLogprobs.sum().backward()
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
    print("B: under grad, a backward through the gumbel sampleLogprobs raises (the claim is true)")
else:
    raise AssertionError

# As the repository runs it: under no_grad, only the token ids are kept, nothing is backwarded
with torch.no_grad():
    seq = []
    for divm in range(2):
        for method in ('greedy', 'gumbel'):
            it, sampleLogprobs = diverse_step(divm, torch.tensor([2, 3, 2, 5]), method)
            assert not sampleLogprobs.requires_grad
            seq.append(it)
print("no_grad (trainer/tester `mode='sample'`): both writes run, no graph exists, the ids are decoded:",
      [s.tolist() for s in seq[:2]])
