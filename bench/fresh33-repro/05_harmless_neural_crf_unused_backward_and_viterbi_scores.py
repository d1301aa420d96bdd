"""fresh33 harmless: allanj/pytorch_neural_crf src/model/module/linear_crf_inferencer.py:221 and :468 (GS301 x2).

Both statements are true of torch (runs A and C raise), but no path of the repository backwards through them:

* :221 is in `LinearCRF.backward` (the backward algorithm, "a benchmark implementation"): after
  `last_beta = torch.gather(beta, 1, ...)` the loop `beta[i, :length] = beta[i, :length][perm_idx[i, :length]]`
  rewrites `beta`, which the gather saved, so `crf.backward(...).backward()` raises (run A). Nothing in the
  repository calls `LinearCRF.backward` (`forward_backward` inlines its own copy, which returns without a gather
  over the rewritten beta and backwards fine: run B; and `get_marginal_score`, its only caller, has no caller).
* :468 is in `viterbi_decode`: `bestScores = torch.gather(lastScores, 1, decodeIdx[:, 0].view(batchSize, 1))`
  saves a view of `decodeIdx` as the index, then `decodeIdx[:, distance2Last + 1] = ...` writes into it, so
  backwarding `bestScores` raises (run C). Every caller (`NNCRF.decode` via trainer.py:266 `with torch.no_grad()`,
  `TransformersCRF.forward(is_train=False)` via transformers_trainer.py:314 / _ddp.py:319 under no_grad, the two
  predictors) keeps only `decodeIdx`, integer tags; the scores are never backwarded (run D: under no_grad it runs).
The methods below are the repository's, verbatim (with `log_sum_exp_pytorch` from src/config/utils.py).
"""
import torch
import torch.nn as nn
from typing import Tuple

def log_sum_exp_pytorch(vec: torch.Tensor) -> torch.Tensor:
    """
    Calculate the log_sum_exp trick for the tensor.
    :param vec: [batchSize * from_label * to_label].
    :return: [batchSize * to_label]
    """
    maxScores, idx = torch.max(vec, 1)
    maxScores[maxScores == -float("Inf")] = 0
    maxScoresExpanded = maxScores.view(vec.shape[0], 1, vec.shape[2]).expand(
        vec.shape[0], vec.shape[1], vec.shape[2]
    )
    return maxScores + torch.log(torch.sum(torch.exp(vec - maxScoresExpanded), 1))


class LinearCRF(nn.Module):
    def __init__(self, label_size, start_idx, end_idx):
        super().__init__()
        self.label_size, self.start_idx, self.end_idx = label_size, start_idx, end_idx
        self.transition = nn.Parameter(torch.randn(label_size, label_size))

    def backward(
        self, lstm_scores: torch.Tensor, word_seq_lens: torch.Tensor
    ) -> torch.Tensor:
        """
        Backward algorithm. A benchmark implementation which is ready to use.
        :param lstm_scores: shape: (batch_size, sent_len, label_size) NOTE: the score from LSTMs, not `all_scores` (which add up the transtiion)
        :param word_seq_lens: shape: (batch_size,)
        :return: Backward variable
        """
        batch_size = lstm_scores.size(0)
        seq_len = lstm_scores.size(1)
        dev_num = lstm_scores.get_device()
        curr_dev = (
            torch.device(f"cuda:{dev_num}") if dev_num >= 0 else torch.device("cpu")
        )
        beta = torch.zeros(batch_size, seq_len, self.label_size, device=curr_dev)

        ## reverse the view of computing the score. we look from behind
        rev_score = self.transition.transpose(0, 1).view(
            1, 1, self.label_size, self.label_size
        ).expand(
            batch_size, seq_len, self.label_size, self.label_size
        ) + lstm_scores.view(batch_size, seq_len, 1, self.label_size).expand(
            batch_size, seq_len, self.label_size, self.label_size
        )

        ## The code below, reverse the score from [0 -> length]  to [length -> 0].  (NOTE: we need to avoid reversing the padding)
        perm_idx = torch.zeros(batch_size, seq_len, device=curr_dev)
        for batch_idx in range(batch_size):
            perm_idx[batch_idx][: word_seq_lens[batch_idx]] = torch.range(
                word_seq_lens[batch_idx] - 1, 0, -1
            )
        perm_idx = perm_idx.long()
        for i, length in enumerate(word_seq_lens):
            rev_score[i, :length] = rev_score[i, :length][perm_idx[i, :length]]

        ## backward operation
        beta[:, 0, :] = rev_score[:, 0, self.end_idx, :]
        for word_idx in range(1, seq_len):
            before_log_sum_exp = (
                beta[:, word_idx - 1, :]
                .view(batch_size, self.label_size, 1)
                .expand(batch_size, self.label_size, self.label_size)
                + rev_score[:, word_idx, :, :]
            )
            beta[:, word_idx, :] = log_sum_exp_pytorch(before_log_sum_exp)

        ## Following code is used to check the backward beta implementation
        last_beta = torch.gather(
            beta,
            1,
            word_seq_lens.view(batch_size, 1, 1).expand(batch_size, 1, self.label_size)
            - 1,
        ).view(batch_size, self.label_size)
        last_beta += (
            self.transition.transpose(0, 1)[:, self.start_idx]
            .view(1, self.label_size)
            .expand(batch_size, self.label_size)
        )
        last_beta = log_sum_exp_pytorch(
            last_beta.view(batch_size, self.label_size, 1)
        ).view(batch_size)

        # This part if optionally, if you only use `last_beta`.
        # Otherwise, you need this to reverse back if you also need to use beta
        for i, length in enumerate(word_seq_lens):
            beta[i, :length] = beta[i, :length][perm_idx[i, :length]]

        return torch.sum(last_beta)

    def forward_backward(
        self, lstm_scores: torch.Tensor, word_seq_lens: torch.Tensor
    ) -> torch.Tensor:
        """
        Note: This function is not used unless you want to compute the marginal probability
        Forward-backward algorithm to compute the marginal probability (in log space)
        Basically, we follow the `backward` algorithm to obtain the backward scores.
        :param lstm_scores:   shape: (batch_size, sent_len, label_size) NOTE: the score from LSTMs, not `all_scores` (which add up the transtiion)
        :param word_seq_lens: shape: (batch_size,)
        :return: Marginal score. If you want probability, you need to use `torch.exp` to convert it into probability
        """
        batch_size = lstm_scores.size(0)
        seq_len = lstm_scores.size(1)
        dev_num = lstm_scores.get_device()
        curr_dev = (
            torch.device(f"cuda:{dev_num}") if dev_num >= 0 else torch.device("cpu")
        )
        alpha = torch.zeros(batch_size, seq_len, self.label_size, device=curr_dev)
        beta = torch.zeros(batch_size, seq_len, self.label_size, device=curr_dev)

        scores = self.transition.view(1, 1, self.label_size, self.label_size).expand(
            batch_size, seq_len, self.label_size, self.label_size
        ) + lstm_scores.view(batch_size, seq_len, 1, self.label_size).expand(
            batch_size, seq_len, self.label_size, self.label_size
        )
        ## reverse the view of computing the score. we look from behind
        rev_score = self.transition.transpose(0, 1).view(
            1, 1, self.label_size, self.label_size
        ).expand(
            batch_size, seq_len, self.label_size, self.label_size
        ) + lstm_scores.view(batch_size, seq_len, 1, self.label_size).expand(
            batch_size, seq_len, self.label_size, self.label_size
        )

        perm_idx = torch.zeros(batch_size, seq_len, device=curr_dev)
        for batch_idx in range(batch_size):
            perm_idx[batch_idx][: word_seq_lens[batch_idx]] = torch.range(
                word_seq_lens[batch_idx] - 1, 0, -1
            )
        perm_idx = perm_idx.long()
        for i, length in enumerate(word_seq_lens):
            rev_score[i, :length] = rev_score[i, :length][perm_idx[i, :length]]

        alpha[:, 0, :] = scores[
            :, 0, self.start_idx, :
        ]  ## the first position of all labels = (the transition from start - > all labels) + current emission.
        beta[:, 0, :] = rev_score[:, 0, self.end_idx, :]
        for word_idx in range(1, seq_len):
            before_log_sum_exp = (
                alpha[:, word_idx - 1, :]
                .view(batch_size, self.label_size, 1)
                .expand(batch_size, self.label_size, self.label_size)
                + scores[:, word_idx, :, :]
            )
            alpha[:, word_idx, :] = log_sum_exp_pytorch(before_log_sum_exp)

            before_log_sum_exp = (
                beta[:, word_idx - 1, :]
                .view(batch_size, self.label_size, 1)
                .expand(batch_size, self.label_size, self.label_size)
                + rev_score[:, word_idx, :, :]
            )
            beta[:, word_idx, :] = log_sum_exp_pytorch(before_log_sum_exp)

        ### batch_size x label_size
        last_alpha = torch.gather(
            alpha,
            1,
            word_seq_lens.view(batch_size, 1, 1).expand(batch_size, 1, self.label_size)
            - 1,
        ).view(batch_size, self.label_size)
        last_alpha += (
            self.transition[:, self.end_idx]
            .view(1, self.label_size)
            .expand(batch_size, self.label_size)
        )
        last_alpha = (
            log_sum_exp_pytorch(last_alpha.view(batch_size, self.label_size, 1))
            .view(batch_size, 1, 1)
            .expand(batch_size, seq_len, self.label_size)
        )

        ## Because we need to use the beta variable later, we need to reverse back
        for i, length in enumerate(word_seq_lens):
            beta[i, :length] = beta[i, :length][perm_idx[i, :length]]

        # `alpha + beta - last_alpha` is the standard way to obtain the marginal
        # However, we have two emission scores overlap at each position, thus, we need to subtract one emission score
        return alpha + beta - last_alpha - lstm_scores

    def viterbi_decode(
        self, all_scores: torch.Tensor, word_seq_lens: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """
        Use viterbi to decode the instances given the scores and transition parameters
        :param all_scores: (batch_size x max_seq_len x num_labels)
        :param word_seq_lens: (batch_size)
        :return: the best scores as well as the predicted label ids.
               (batch_size) and (batch_size x max_seq_len)
        """
        batchSize = all_scores.shape[0]
        sentLength = all_scores.shape[1]
        dev_num = all_scores.get_device()
        curr_dev = (
            torch.device(f"cuda:{dev_num}") if dev_num >= 0 else torch.device("cpu")
        )
        scoresRecord = torch.zeros(
            [batchSize, sentLength, self.label_size], device=curr_dev
        )
        idxRecord = torch.zeros(
            [batchSize, sentLength, self.label_size], dtype=torch.int64, device=curr_dev
        )
        mask = torch.ones_like(word_seq_lens, dtype=torch.int64, device=curr_dev)
        startIds = torch.full(
            (batchSize, self.label_size),
            self.start_idx,
            dtype=torch.int64,
            device=curr_dev,
        )
        decodeIdx = torch.LongTensor(batchSize, sentLength).to(curr_dev)

        scores = all_scores
        # scoresRecord[:, 0, :] = self.getInitAlphaWithBatchSize(batchSize).view(batchSize, self.label_size)
        scoresRecord[:, 0, :] = scores[
            :, 0, self.start_idx, :
        ]  ## represent the best current score from the start, is the best
        idxRecord[:, 0, :] = startIds
        for wordIdx in range(1, sentLength):
            ### scoresIdx: batch x from_label x to_label at current index.
            scoresIdx = (
                scoresRecord[:, wordIdx - 1, :]
                .view(batchSize, self.label_size, 1)
                .expand(batchSize, self.label_size, self.label_size)
                + scores[:, wordIdx, :, :]
            )
            idxRecord[:, wordIdx, :] = torch.argmax(
                scoresIdx, 1
            )  ## the best previous label idx to crrent labels
            scoresRecord[:, wordIdx, :] = torch.gather(
                scoresIdx,
                1,
                idxRecord[:, wordIdx, :].view(batchSize, 1, self.label_size),
            ).view(batchSize, self.label_size)

        lastScores = torch.gather(
            scoresRecord,
            1,
            word_seq_lens.view(batchSize, 1, 1).expand(batchSize, 1, self.label_size)
            - 1,
        ).view(batchSize, self.label_size)  ##select position
        lastScores += (
            self.transition[:, self.end_idx]
            .view(1, self.label_size)
            .expand(batchSize, self.label_size)
        )
        decodeIdx[:, 0] = torch.argmax(lastScores, 1)
        bestScores = torch.gather(lastScores, 1, decodeIdx[:, 0].view(batchSize, 1))

        for distance2Last in range(sentLength - 1):
            lastNIdxRecord = torch.gather(
                idxRecord,
                1,
                torch.where(
                    word_seq_lens - distance2Last - 1 > 0,
                    word_seq_lens - distance2Last - 1,
                    mask,
                )
                .view(batchSize, 1, 1)
                .expand(batchSize, 1, self.label_size),
            ).view(batchSize, self.label_size)
            decodeIdx[:, distance2Last + 1] = torch.gather(
                lastNIdxRecord, 1, decodeIdx[:, distance2Last].view(batchSize, 1)
            ).view(batchSize)

        return bestScores, decodeIdx


torch.manual_seed(0)
L, B, T = 6, 3, 5
crf = LinearCRF(L, start_idx=3, end_idx=4)
lens = torch.tensor([5, 3, 4])
lstm = torch.randn(B, T, L, requires_grad=True)

try:                                                      # A: line 221
    crf.backward(lstm, lens).backward()
    raise AssertionError("A: expected the in-place error")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e); print("A raises:", str(e)[:90])

m = crf.forward_backward(lstm, lens)                      # B: the copy that is used for marginals
m.sum().backward(); print("B forward_backward backwards fine")

all_scores = crf.transition.view(1, 1, L, L) + lstm.view(B, T, 1, L)   # calculate_all_scores
best, idx = crf.viterbi_decode(all_scores, lens)
try:                                                      # C: line 468
    best.sum().backward()
    raise AssertionError("C: expected the in-place error")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e); print("C raises:", str(e)[:90])

with torch.no_grad():                                     # D: how every caller runs it
    best, idx = crf.viterbi_decode(all_scores, lens)
assert not best.requires_grad and idx.dtype == torch.int64
print("D under no_grad: tags", idx.tolist())
