"""fresh36 repro 01 (real, GS404): czq142857/BSP-NET-pytorch modelSVR.py:443.

BSP_SVR.train: per epoch `avg_loss = 0`, then per batch
    self.bsp_network.zero_grad()
    z_vector, _,_,_ = self.bsp_network(batch_view, None, None, None, is_training=True)
    err = self.loss(z_vector, batch_zs)          # network_loss: torch.mean((pred_z - gt_z)**2)
    err.backward()
    self.optimizer.step()
    avg_loss += err                                # line 443: a tensor with its graph
    avg_num += 1
and avg_loss is read only by the per-epoch print ("%.8f" % (avg_loss/avg_num)).
The image encoder is replaced by a small conv net; the loop statements are the file's.
"""
import torch
import torch.nn as nn


class img_encoder(nn.Module):  # stand-in for the ResNet image encoder (z_dim output)
    def __init__(self, z_dim=8):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, 2, 1)
        self.fc = nn.Linear(4 * 8 * 8, z_dim)

    def forward(self, view, is_training=False):
        return torch.sigmoid(self.fc(torch.relu(self.conv(view)).flatten(1)))


def network_loss(pred_z, gt_z):
    return torch.mean((pred_z - gt_z) ** 2)


def reachable(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


torch.manual_seed(0)
enc = img_encoder()
optimizer = torch.optim.Adam(enc.parameters(), lr=1e-4, betas=(0.5, 0.999))
counts = []
for epoch in range(2):
    avg_loss = 0
    avg_num = 0
    for idx in range(6):
        batch_view = torch.rand(4, 1, 16, 16)
        batch_zs = torch.rand(4, 8)
        enc.zero_grad()
        z_vector = enc(batch_view, is_training=True)
        err = network_loss(z_vector, batch_zs)
        err.backward()
        optimizer.step()
        avg_loss += err
        avg_num += 1
        counts.append(reachable(avg_loss))
    print("Epoch: [%2d] loss: %.8f" % (epoch, avg_loss / avg_num))
print("graph nodes reachable from avg_loss after each step:", counts)
assert avg_loss.requires_grad and avg_loss.grad_fn is not None
assert counts[5] > counts[4] > counts[3] > counts[0]       # grows every step within an epoch
assert counts[6] < counts[5]                                # reset per epoch by `avg_loss = 0`
print("OK: one more graph chain per batch is kept alive for the whole epoch (memory only; read only by the print)")
