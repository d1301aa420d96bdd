# real net/fmri_lstm.py (parent b516370c) driven like run_training_lstm.py / run_training_save_acc_lstm.py
import sys, torch, torch.nn as nn, torch.optim as optim
from fmri_lstm import fMRI_LSTM
bs, W = 8, 16
net = fMRI_LSTM(256, 22, 1, batch_size=bs)
opt = optim.Adam(net.parameters(), lr=1e-3, weight_decay=0.001)
crit = nn.BCELoss()
reset = sys.argv[1] == 'reset'
for step in range(4):
    if reset:
        net.hidden = net.init_hidden(bs)   # run_training_lstm.py:44, run_training_save_acc_lstm.py:63
    net.train()
    x = torch.randn(bs, 1, W, 22, 1).squeeze()
    y = torch.randint(0, 2, (bs, 1)).float()
    opt.zero_grad(); out = net(x); loss = crit(out, y); loss.backward(); opt.step()
    # eval-by-voting block (grad mode, no backward)
    for k in range(2):
        net(torch.randn(bs, 1, W, 22, 1).squeeze())
print('ran cleanly', 'reset' if reset else 'no reset')
