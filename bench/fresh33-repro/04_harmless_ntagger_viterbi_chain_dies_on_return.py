"""fresh33 harmless: dsindex/ntagger model/crf_for_onnx.py:334 (GS404).

`CRF._viterbi_decode` carries `score = torch.where(mask[i]..., next_score, score)` through `for i in range(1,
seq_length)` and nothing backwards it: true. The model's forward calls `self.crf.decode(logits)` in training too
(train.py:97-99 `logits, prediction = model(x)`, grad mode on; the loss is `model.crf(logits, tags=y, ...)`), so each
training forward builds this chain of seq_length nodes from the emissions. But the chain is local to the call: the
method returns only integer tags (`torch.where(mask, best_tags_arr, oor_tag)`, no grad_fn), so the nodes die when it
returns; nothing carries them to the next training step, and evaluation runs under `torch.no_grad()`
(train.py:238). The cost is one bounded, short-lived graph per forward (measured below: the bytes the chain saves
for backward, all freed on return; memory after 20 calls equals memory after 1). The method below is the
repository's `_viterbi_decode`, verbatim.
"""
import gc
import weakref
import torch
from torch import nn
from typing import Optional


class CRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.num_tags = num_tags
        self.start_transitions = nn.Parameter(torch.randn(num_tags))
        self.end_transitions = nn.Parameter(torch.randn(num_tags))
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags))

    def _viterbi_decode(self, emissions: torch.FloatTensor,
                        mask: torch.ByteTensor,
                        pad_tag: Optional[int] = None) -> torch.Tensor:
        # emissions: (seq_length, batch_size, num_tags)
        # mask: (seq_length, batch_size)
        # return: (batch_size, seq_length)
        if pad_tag is None:
            pad_tag = 0

        device = emissions.device
        seq_length, batch_size = mask.shape

        # Start transition and first emission
        # shape: (batch_size, num_tags)
        score = self.start_transitions + emissions[0]
        history_idx = torch.zeros((seq_length, batch_size, self.num_tags),
                                  dtype=torch.long, device=device)
        oor_idx = torch.zeros((batch_size, self.num_tags),
                              dtype=torch.long, device=device)
        oor_tag = torch.full((seq_length, batch_size), pad_tag,
                             dtype=torch.long, device=device)

        # - score is a tensor of size (batch_size, num_tags) where for every batch,
        #   value at column j stores the score of the best tag sequence so far that ends
        #   with tag j
        # - history_idx saves where the best tags candidate transitioned from; this is used
        #   when we trace back the best tag sequence
        # - oor_idx saves the best tags candidate transitioned from at the positions
        #   where mask is 0, i.e. out of range (oor)

        # Viterbi algorithm recursive case: we compute the score of the best tag sequence
        # for every possible next tag
        for i in range(1, seq_length):
            # Broadcast viterbi score for every possible next tag
            # shape: (batch_size, num_tags, 1)
            broadcast_score = score.unsqueeze(2)

            # Broadcast emission score for every possible current tag
            # shape: (batch_size, 1, num_tags)
            broadcast_emission = emissions[i].unsqueeze(1)

            # Compute the score tensor of size (batch_size, num_tags, num_tags) where
            # for each sample, entry at row i and column j stores the score of the best
            # tag sequence so far that ends with transitioning from tag i to tag j and emitting
            # shape: (batch_size, num_tags, num_tags)
            next_score = broadcast_score + self.transitions + broadcast_emission

            # Find the maximum score over all possible current tag
            # shape: (batch_size, num_tags)
            next_score, indices = next_score.max(dim=1)

            # Set score to the next score if this timestep is valid (mask == 1)
            # and save the index that produces the next score
            # shape: (batch_size, num_tags)
            score = torch.where(mask[i].unsqueeze(-1).bool(), next_score, score)
            indices = torch.where(mask[i].unsqueeze(-1).bool(), indices, oor_idx)
            history_idx[i - 1] = indices

        # End transition score
        # shape: (batch_size, num_tags)
        end_score = score + self.end_transitions
        _, end_tag = end_score.max(dim=1)

        # shape: (batch_size,)
        seq_ends = mask.long().sum(dim=0) - 1

        # insert the best tag at each sequence end (last position with mask == 1)
        history_idx = history_idx.transpose(1, 0).contiguous()
        history_idx.scatter_(1, seq_ends.view(-1, 1, 1).expand(-1, 1, self.num_tags),
                             end_tag.view(-1, 1, 1).expand(-1, 1, self.num_tags))
        history_idx = history_idx.transpose(1, 0).contiguous()

        # The most probable path for each sequence
        best_tags_arr = torch.zeros((seq_length, batch_size),
                                    dtype=torch.long, device=device)
        best_tags = torch.zeros(batch_size, 1, dtype=torch.long, device=device)
        for idx in range(seq_length - 1, -1, -1):
            best_tags = torch.gather(history_idx[idx], 1, best_tags)
            best_tags_arr[idx] = best_tags.data.view(batch_size)

        return torch.where(mask.bool(), best_tags_arr, oor_tag).transpose(0, 1)



torch.manual_seed(0)
crf = CRF(7)
proj = nn.Linear(16, 7)
seq, batch = 40, 8
mask = torch.ones(seq, batch, dtype=torch.bool)
mask[30:, :3] = False

saved_bytes = []
def pack(t):
    saved_bytes[-1] += t.numel() * t.element_size()
    return t

holder = []
def one_forward():
    emissions = proj(torch.randn(seq, batch, 16))          # grad mode on, as in training
    saved_bytes.append(0)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        tags = crf._viterbi_decode(emissions, mask)
    assert tags.grad_fn is None and not tags.requires_grad
    holder.append(weakref.ref(emissions))
    return tags

for step in range(20):
    one_forward()
gc.collect()
alive = sum(r() is not None for r in holder)
print(f"bytes saved for backward inside one decode: {saved_bytes[0]}; graphs alive after 20 calls: {alive}")
assert saved_bytes[0] > 0          # the chain is built (the warning's statement)
assert alive == 0                  # and nothing of it outlives the call
