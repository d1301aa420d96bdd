"""Truncated backpropagation through time, done wrong: the hidden state is carried across iterations
without `.detach()`, so the second iteration's backward raises
"Trying to backward through the graph a second time" (GS402 at the carry, line 27)."""
import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, vocab=32, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, h):
        out, h = self.rnn(self.embed(tokens), h)
        return self.head(out), h


model = CharRNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
hidden = torch.zeros(1, 4, 64)
for chunk in range(5):
    tokens = torch.randint(0, 32, (4, 16))
    targets = torch.randint(0, 32, (4, 16))
    logits, hidden = model(tokens, hidden)
    loss = criterion(logits.reshape(-1, 32), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
