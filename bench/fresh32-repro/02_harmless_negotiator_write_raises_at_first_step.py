"""fresh32 harmless: facebookresearch/end-to-end-negotiator src/models/latent_clustering_model.py:1221 (GS404).

`BaselineClusteringModel.write` (called per turn by `BaselineClusteringAgent.write` in selfplay, grad mode on: no
no_grad outside the engines) decodes with

    for _ in range(max_words):
        inpt_emb = self.embed_sentence(inpt)
        lang_h = self.decoder_writer(inpt_emb, lang_h)                         # line 1221
        if self.word_dict.get_word(inpt.data[0]) in stop_tokens: break
        out = self.unembed_sentence(lang_h.unsqueeze(0))
        scores = out.div(temperature)
        scores = scores.sub(scores.max().data[0]).squeeze(0)                   # line 1230
        ...
        prob = F.softmax(scores)
        inpt = prob.multinomial().detach()                                     # line 1236

The claim (lang_h carries each step's graph into the next, nothing backwards it) is true of the statements: with the
two torch-0.3 calls written the way the sibling `LatentClusteringLanguageModel.write` (line 972-986) writes them,
`.item()` and `multinomial(1)`, the graph behind lang_h grows every step (run B). But as shipped the loop never
reaches a second step on torch >= 0.5 (the README names torch 1.0.0): `scores.max()` is 0-dim, and `.data[0]` on it
raises IndexError in the first step (run A; `multinomial()` without num_samples would raise TypeError next).
The decoder below is a GRUCell with the real statement order; embed/unembed are Linear/Embedding stand-ins.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
V, H = 12, 8
embed = nn.Embedding(V, H)
decoder_writer = nn.GRUCell(H, H)
unembed = nn.Linear(H, V)
words = ['YOU:', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', '<eos>', '<selection>']
stop_tokens = ['<eos>', '<selection>']
special_token_mask = torch.zeros(V)


def nodes(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        f = todo.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        todo.extend(g for g, _ in f.next_functions)
    return len(seen)


def write(max_words, temperature, modern):
    lang_h = decoder_writer(torch.randn(1, H), torch.zeros(1, H))
    inpt = torch.tensor([0])
    sizes = []
    for _ in range(max_words):
        inpt_emb = embed(inpt)
        lang_h = decoder_writer(inpt_emb, lang_h)                 # line 1221
        sizes.append(nodes(lang_h))
        if words[inpt.data[0]] in stop_tokens:
            break
        out = unembed(lang_h.unsqueeze(0))
        scores = out.div(temperature)
        if modern:
            scores = scores.sub(scores.max().item()).squeeze(0)
        else:
            scores = scores.sub(scores.max().data[0]).squeeze(0)  # line 1230
        scores = scores.add(special_token_mask)
        prob = F.softmax(scores, dim=-1)
        inpt = (prob.multinomial(1) if modern else prob.multinomial()).detach().view(-1)
    return sizes


try:
    write(10, 1.0, modern=False)
    err = None
except (IndexError, TypeError) as e:
    err = e
print("A as shipped:", type(err).__name__, err)
assert isinstance(err, IndexError) and "0-dim" in str(err)

special_token_mask[10:] = -1e9                                   # never sample a stop token, to see 10 steps
sizes = write(10, 1.0, modern=True)
print("B .item()/multinomial(1): nodes behind lang_h per step", sizes)
assert all(b > a for a, b in zip(sizes, sizes[1:]))
print("OK: the graph chain is real in the statements, but the shipped loop raises in its first step")
