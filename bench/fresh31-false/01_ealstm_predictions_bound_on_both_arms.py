"""fresh31 false: kratzert/ealstm_regional_modeling main.py:406 and :411 (GS402, two findings).

`train_epoch` iterates `for data in pbar:` and binds `predictions` in an if/elif without else:
`if len(data) == 3: x, y, q_stds = data; ...; predictions = model(x)[0]` /
`elif len(data) == 4: x_d, x_s, y, q_stds = data; ...; predictions = model(x_d, x_s[:, 0, :])[0]`,
then `loss = loss_func(predictions, y)` (406, MSE) or `loss = loss_func(predictions, y, q_stds)` (411, NSE) and
`loss.backward()` (414). gradsight reports that `predictions` may carry the previous iteration's graph (the path
where neither arm runs) and that the next backward raises "Trying to backward through the graph a second time".
That path does not exist: the loader's dataset is `CamelsH5` (main.py:314), whose `__getitem__` returns
`x, y, q_std` (no_static or concat_static) or `x, attributes, y, q_std` (EA-LSTM): always 3 or 4 items, so every
iteration rebinds `predictions` from a fresh forward. (`predictions` is not bound before the loop either: if no arm
ran on the first batch the loop would raise NameError, not a second-backward error.) Run below: the real loop body
with a small model in both layouts and both losses, 5 batches each: every backward succeeds.
"""
import torch
import torch.nn as nn


class NSELoss(nn.Module):
    def __init__(self, eps: float = 0.1):
        super(NSELoss, self).__init__()
        self.eps = eps

    def forward(self, y_pred, y_true, q_stds):
        squared_error = (y_pred - y_true)**2
        weights = 1 / (q_stds + self.eps)**2
        return torch.mean(weights * squared_error)


class Model(nn.Module):                       # stand-in for main.py's Model (LSTM or EA-LSTM, then fc on last h)
    def __init__(self, n_dyn, n_stat):
        super().__init__()
        self.lstm = nn.LSTM(n_dyn + n_stat, 8, batch_first=True)
        self.fc = nn.Linear(8, 1)

    def forward(self, x_d, x_s=None):
        if x_s is not None:
            x_d = torch.cat([x_d, x_s.unsqueeze(1).expand(-1, x_d.size(1), -1)], dim=2)
        h_n, c_n = self.lstm(x_d)
        return self.fc(h_n[:, -1, :]), h_n, c_n


def train_epoch(model, optimizer, loss_func, loader, use_mse):
    model.train()
    for data in loader:
        optimizer.zero_grad()
        if len(data) == 3:
            x, y, q_stds = data
            predictions = model(x)[0]
        elif len(data) == 4:
            x_d, x_s, y, q_stds = data
            predictions = model(x_d, x_s[:, 0, :])[0]
        if use_mse:
            loss = loss_func(predictions, y)               # line 406
        else:
            loss = loss_func(predictions, y, q_stds)       # line 411
        loss.backward()                                    # line 414
        optimizer.step()


torch.manual_seed(0)
B, L = 4, 10
three = [(torch.rand(B, L, 32), torch.rand(B, 1), torch.rand(B, 1)) for _ in range(5)]          # concat_static
four = [(torch.rand(B, L, 5), torch.rand(B, 1, 27), torch.rand(B, 1), torch.rand(B, 1)) for _ in range(5)]  # EA-LSTM
for name, loader, n_dyn, n_stat in (("3-tuples", three, 32, 0), ("4-tuples", four, 5, 27)):
    for use_mse, loss_func in ((True, nn.MSELoss()), (False, NSELoss())):
        model = Model(n_dyn, n_stat)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        train_epoch(model, opt, loss_func, loader, use_mse)
        print(f"{name}, use_mse={use_mse}: 5 iterations, every backward ran")
print("OK: no second-backward error; predictions is rebound by one arm in every iteration")
