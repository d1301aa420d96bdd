"""Reproduction for `flair_generate_text_hidden_graph`: zalandoresearch/flair commit c0d8e45d ("GH-210: Add torch.no_grad to generate_text").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `generate_text` runs the recurrent language model for `number_of_characters` steps in grad mode,
feeding the returned `hidden` back in, so the hidden state's graph grows by one RNN step per character and
keeps every step's saved tensors alive until the loop ends (memory grows with the generated length); the fix
wraps the generation in `torch.no_grad()`.
"""

import torch

rnn = torch.nn.LSTM(4, 8)
decoder = torch.nn.Linear(8, 4)
embedding = torch.nn.Embedding(4, 4)


def steps_kept(t):
    """How many distinct decoder/LSTM-step nodes are reachable from t's grad_fn."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return sum(type(fn).__name__.startswith("Embedding") for fn in seen)


def generate_text(number_of_characters):
    hidden = (torch.zeros(1, 1, 8), torch.zeros(1, 1, 8))
    input = torch.randint(0, 4, (1, 1))
    for _ in range(number_of_characters):
        output, hidden = rnn(embedding(input), hidden)
        prediction = decoder(output)
        word_weights = prediction.squeeze().data.div(1.0).exp()
        word_idx = torch.multinomial(word_weights, 1)[0]
        input.data.fill_(word_idx)
    return hidden


hidden = generate_text(20)                           # buggy: grad mode
assert hidden[0].grad_fn is not None
assert steps_kept(hidden[0]) == 20                   # the graph of every generated character is alive
with torch.no_grad():                                # the fix
    hidden = generate_text(20)
assert hidden[0].grad_fn is None

print("CONFIRMED")
