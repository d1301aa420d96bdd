# fresh12 GS212, harmless (huawei-noah/Speech-Backbones SPIRAL/nemo/collections/asr/models/st2vec/st2vec_model.py:515).
# Speech-Backbones SPIRAL st2vec_model.py:513-521: the discarded expand() changes nothing, broadcasting gives [B, T]
import torch
def create_shift_padding_mask(lengths, max_len, shift_num_units, keep):
    positions = torch.arange(max_len, device=lengths.device)
    if keep:
        positions = positions.expand(len(lengths), max_len)
    else:
        positions.expand(len(lengths), max_len)
    shift_audio_lengths = lengths + shift_num_units
    if shift_num_units > 0:
        return (positions >= lengths.unsqueeze(1)) & (positions < shift_audio_lengths.unsqueeze(1))
    return (positions >= shift_audio_lengths.unsqueeze(1)) & (positions < lengths.unsqueeze(1))
lengths = torch.tensor([5, 9, 7])
for s in (2, -3):
    a, b = create_shift_padding_mask(lengths, 12, s, False), create_shift_padding_mask(lengths, 12, s, True)
    assert a.shape == b.shape == (3, 12) and torch.equal(a, b)
print("same mask with and without the assignment")
