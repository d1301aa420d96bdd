import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, vocab, hidden_size):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.rnn = nn.GRU(8, hidden_size, batch_first=True)
        self.fc = nn.Linear(hidden_size, vocab)

    def forward(self, tokens, hidden=None):
        out, hidden = self.rnn(self.embed(tokens), hidden)
        return self.fc(out), hidden


class CharTrainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.criterion = nn.CrossEntropyLoss()
        self.hidden = None

    def train_step(self, inputs, targets):
        self.optimizer.zero_grad()
        output, hidden = self.model(inputs, self.hidden)
        self.hidden = hidden.detach()
        loss = self.criterion(output.reshape(-1, output.size(-1)), targets.reshape(-1))
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
trainer = CharTrainer(CharRNN(12, 16))
stream = torch.randint(0, 12, (3, 2, 7))
for chunk in stream:
    trainer.train_step(chunk[:, :-1], chunk[:, 1:])
