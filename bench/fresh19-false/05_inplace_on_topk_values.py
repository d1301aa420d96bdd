"""fresh19 (false): GS301 ayumiymk/aster.pytorch `lib/models/attention_recognition_head.py:118`.

Beam search (`AttentionRecognitionHead.beam_search`):

    sequence_scores = _inflate(sequence_scores, self.num_classes, 1)   # .repeat
    sequence_scores += log_softmax_output
    scores, candidates = sequence_scores.view(batch_size, -1).topk(beam_width, dim=1)
    y_prev = (candidates % self.num_classes).view(batch_size * beam_width)
    sequence_scores = scores.view(batch_size * beam_width, 1)
    ...
    stored_scores.append(sequence_scores.clone())
    eos_indices = y_prev.view(-1, 1).eq(eos)
    if eos_indices.nonzero().dim() > 0:
        sequence_scores.masked_fill_(eos_indices, -float('inf'))      # line 118

`topk` saves only its indices for backward (its gradient scatters into the input's shape at `indices`), not its
values, and `view`, `clone` and `repeat` save no values either: nothing the write touches is saved. (Besides, beam
search runs only in eval mode, and every evaluator calls the model under `torch.no_grad()`.) Runs with grad mode on:
the loop with the in-place write, then a backward through all steps, cleanly.
"""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
batch_size, beam_width, num_classes, eos = 2, 3, 5, 1
logits = torch.randn(6, batch_size * beam_width, num_classes, requires_grad=True)
sequence_scores = torch.full((batch_size * beam_width, 1), -float('inf'))
sequence_scores.index_fill_(0, torch.arange(batch_size) * beam_width, 0.0)
stored_scores = []
for i in range(6):
    log_softmax_output = F.log_softmax(logits[i], dim=1)
    sequence_scores = sequence_scores.repeat(1, num_classes)
    sequence_scores += log_softmax_output
    scores, candidates = sequence_scores.view(batch_size, -1).topk(beam_width, dim=1)
    y_prev = (candidates % num_classes).view(batch_size * beam_width)
    sequence_scores = scores.view(batch_size * beam_width, 1)
    stored_scores.append(sequence_scores.clone())
    eos_indices = y_prev.view(-1, 1).eq(eos)
    if eos_indices.nonzero().dim() > 0:
        sequence_scores.masked_fill_(eos_indices, -float('inf'))
total = sum(s[torch.isfinite(s)].sum() for s in stored_scores) + sequence_scores[torch.isfinite(sequence_scores)].sum()
total.backward()
print("backward through every beam step ran; grad norm", logits.grad.norm().item())
