# fresh11 false shape 2 (GS301, ruotianluo/ImageCaptioning.pytorch captioning/models/AttModel.py:343): a sampling
# helper returns the sampled index and `logprobs.gather(1, it.unsqueeze(1))`; the decoding loop drops the gathered
# value, writes into the index in place (`it[~unfinished] = pad`) and builds its loss from `logprobs` only. gather
# saved the index, but no backward ever reaches that gather node, so the loss's backward runs.
import torch
import torch.nn as nn
import torch.nn.functional as F


def sample_next_word(logprobs):
    it = torch.distributions.Categorical(logits=logprobs.detach()).sample()
    sample_logprobs = logprobs.gather(1, it.unsqueeze(1))
    return it, sample_logprobs


def sample(decoder, feats, steps=4, pad_idx=0, eos_idx=5):
    seq = feats.new_zeros(feats.shape[0], steps, dtype=torch.long)
    seq_logprobs = feats.new_zeros(feats.shape[0], steps, 6)
    for t in range(steps):
        logprobs = F.log_softmax(decoder(feats + t), dim=1)
        it, sample_logprobs = sample_next_word(logprobs)
        if t == 0:
            unfinished = it != eos_idx
        else:
            it[~unfinished] = pad_idx
            logprobs = logprobs * unfinished.unsqueeze(1).to(logprobs)
            unfinished = unfinished & (it != eos_idx)
        seq[:, t] = it
        seq_logprobs[:, t] = logprobs
    return seq, seq_logprobs


decoder = nn.Linear(4, 6)
seq, seq_logprobs = sample(decoder, torch.randn(3, 4))
loss = -seq_logprobs.gather(2, seq.unsqueeze(2)).sum()
loss.backward()
print("ok", decoder.weight.grad.abs().sum().item() > 0)
