import torch
import torch.nn as nn
import torch.nn.functional as F


class LitClassifier(nn.Module):
    def __init__(self, in_dim=8, num_classes=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, num_classes))
        self.training_step_outputs = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        preds = self(x)
        loss = F.cross_entropy(preds, y)
        self.training_step_outputs.append(preds.detach())
        return loss

    def on_train_epoch_end(self):
        self.epoch_preds = torch.cat(self.training_step_outputs)
        self.training_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def fit(module, loader, max_epochs=2):
    optimizer = module.configure_optimizers()
    for epoch in range(max_epochs):
        for batch_idx, batch in enumerate(loader):
            loss = module.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        module.on_train_epoch_end()


torch.manual_seed(0)
lit = LitClassifier()
fit(lit, [(torch.randn(5, 8), torch.randint(0, 4, (5,))) for _ in range(3)])
