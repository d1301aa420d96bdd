"""fresh17 (false): GS201 End-to-end-ASR-Pytorch `src/ctc.py:259, 348`.

`CTCBeamDecoder(nn.Module).forward` runs its RNN language model `self.lm` (loaded, `.eval()`) and converts
`(output).log_softmax(dim=-1).squeeze().cpu().numpy()`. Its only caller is `ctc_beam_decode` in
`bin/test_asr.py:215-223`, handed the decoder through `functools.partial(ctc_beam_decode, model=deepcopy(decoder))`
and run by joblib: it calls `hyp = model(feat, feat_len)` inside `with torch.no_grad():`, so the LM output does
not require grad and `.numpy()` works. No other file constructs or calls CTCBeamDecoder. The program builds the
same shape (a module whose forward decodes with an LM and converts its output) and calls it the same way.
"""
import functools

import torch
import torch.nn as nn


class RNNLM(nn.Module):
    def __init__(self, vocab=6, dim=8):
        super().__init__()
        self.emb, self.rnn, self.out = nn.Embedding(vocab, dim), nn.LSTM(dim, dim, batch_first=True), nn.Linear(dim, vocab)

    def forward(self, x, lens, hidden):
        h, hidden = self.rnn(self.emb(x), hidden)
        return self.out(h), hidden


class CTCBeamDecoder(nn.Module):  # src/ctc.py, the LM part of forward
    def __init__(self):
        super().__init__()
        self.lm = RNNLM()
        self.lm.eval()

    def forward(self, feat, feat_len):
        output, hidden = self.lm(torch.zeros((1, 1), dtype=torch.long), torch.ones(1, dtype=torch.long), None)
        scores = (output).log_softmax(dim=-1).squeeze().cpu().numpy()  # ctc.py:259
        for t in range(3):
            output, hidden = self.lm(int(scores.argmax()) * torch.ones((1, 1), dtype=torch.long),
                                     torch.ones(1, dtype=torch.long), hidden)
            scores = (output).log_softmax(dim=-1).squeeze().cpu().numpy()  # ctc.py:348
        return scores.argmax()


def ctc_beam_decode(data, model, device):  # bin/test_asr.py, as written
    name, feat, feat_len, txt = data
    with torch.no_grad():
        hyp = model(feat, feat_len)
    return (name[0], hyp, txt[0])


func = functools.partial(ctc_beam_decode, model=CTCBeamDecoder(), device="cpu")
print(func((["utt1"], torch.randn(1, 5, 4), torch.tensor([5]), [torch.tensor([1, 2])])))
try:
    CTCBeamDecoder()(None, None)  # the path the finding describes, which no caller takes
except RuntimeError as e:
    print("with grad on it would raise:", str(e)[:70])
