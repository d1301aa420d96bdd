"""fresh36 repro 03 (harmless, GS212): Rongjiehuang/FastDiff utils/tts_utils.py:29.

    def sequence_mask(lengths, maxlen, dtype=torch.bool):
        if maxlen is None:
            maxlen = lengths.max()
        mask = ~(torch.ones((len(lengths), maxlen)).to(lengths.device).cumsum(dim=1).t() > lengths).t()
        mask.type(dtype)                      # line 29: result thrown away (true)
        return mask
The only caller (tasks/tts/tts_base.py:387) is
    mask_r = 1 - sequence_mask(seq_length - 1, target.size(1)).float()
with the default dtype=torch.bool: `mask` is already bool (`~` of a comparison), so the conversion would change
nothing, and the caller converts with `.float()` itself.
"""
import torch


def sequence_mask(lengths, maxlen, dtype=torch.bool):
    if maxlen is None:
        maxlen = lengths.max()
    mask = ~(torch.ones((len(lengths), maxlen)).to(lengths.device).cumsum(dim=1).t() > lengths).t()
    mask.type(dtype)
    return mask


def sequence_mask_assigned(lengths, maxlen, dtype=torch.bool):
    if maxlen is None:
        maxlen = lengths.max()
    mask = ~(torch.ones((len(lengths), maxlen)).to(lengths.device).cumsum(dim=1).t() > lengths).t()
    mask = mask.type(dtype)
    return mask


seq_length = torch.tensor([5, 3, 7])
target = torch.zeros(3, 7, 80)
a = sequence_mask(seq_length - 1, target.size(1))
b = sequence_mask_assigned(seq_length - 1, target.size(1))
assert a.dtype == torch.bool and torch.equal(a, b)
m = ~(torch.ones(2, 3).cumsum(dim=1) > 1)
assert m.dtype == torch.bool and m.type(torch.bool) is m       # a same-dtype .type() returns the tensor itself
mask_r_a = 1 - a.float()
mask_r_b = 1 - b.float()
assert torch.equal(mask_r_a, mask_r_b)
# the latent defect: a non-default dtype would be ignored (no caller passes one)
assert sequence_mask(seq_length, 7, dtype=torch.float32).dtype == torch.bool
print("OK: with the only dtype used (bool) the dropped .type() changes nothing; the caller's mask_r is identical")
