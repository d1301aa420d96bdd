"""A CRF layer whose Viterbi decoding only `run.py` calls, always under `torch.no_grad()`; `run.py` imports
`tagger.py`, which imports this file (lonePatient/BERT-NER-Pytorch: run_ner_crf.py -> models/bert_for_ner.py ->
models/layers/crf.py:297). `score` never requires grad there, so the loop keeps no graph."""
import torch
import torch.nn as nn


class CRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.start_transitions = nn.Parameter(torch.randn(num_tags))
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags))

    def decode(self, emissions):
        return self._viterbi_decode(emissions)

    def _viterbi_decode(self, emissions):
        score = self.start_transitions + emissions[0]
        for i in range(1, emissions.shape[0]):
            next_score = score.unsqueeze(2) + self.transitions + emissions[i].unsqueeze(1)
            next_score, indices = next_score.max(dim=1)
            score = torch.where(torch.ones_like(next_score, dtype=torch.bool), next_score, score)
        assert not score.requires_grad
        return score.argmax(dim=1)
