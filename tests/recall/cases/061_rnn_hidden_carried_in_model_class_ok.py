import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, vocab, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.embed = nn.Embedding(vocab, 8)
        self.gru = nn.GRU(8, hidden_size, batch_first=True)
        self.decoder = nn.Linear(hidden_size, vocab)

    def forward(self, tokens, hidden):
        out, hidden = self.gru(self.embed(tokens), hidden)
        return self.decoder(out), hidden

    def init_hidden(self, batch):
        return torch.zeros(1, batch, self.hidden_size)


def train(model, batches, epochs=2):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    hidden = model.init_hidden(4)
    for epoch in range(epochs):
        for inputs, targets in batches:
            hidden = hidden.detach()
            logits, hidden = model(inputs, hidden)
            loss = criterion(logits.reshape(-1, 10), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


torch.manual_seed(0)
data = [(torch.randint(0, 10, (4, 6)), torch.randint(0, 10, (4, 6))) for _ in range(3)]
train(CharRNN(10, 16), data)
