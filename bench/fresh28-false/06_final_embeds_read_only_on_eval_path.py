"""GS413 false (x6): HKUDS/RLMRec encoder/models/general_cf/gccf.py:45, gccf_gene.py:77, gccf_plus.py:63, dccf.py:112,
dccf_gene.py:141, dccf_plus.py:127.

Each model's `forward` ends with `self.final_embeds = embeds` (the propagated embeddings, graph alive) and begins with
`if not self.is_training: return self.final_embeds[:self.user_num], ...` (dccf: `... and self.final_embeds is not
None`). `cal_loss` (the training entry) sets `self.is_training = True` before calling forward, so every training
step recomputes; only `full_predict` sets it to False, after its own forward, and the trainer runs `full_predict`
under `torch.no_grad()` (trainer/metrics.py), so the embeddings the evaluation batches reuse carry no graph. No
backward ever reaches a stored graph: training, evaluation and training again run without error. GCCF as in the
repository (a dense adjacency instead of `torch.spmm` on a sparse one; BaseModel's config reads replaced by
arguments), the trainer's `train_epoch` and the metric's evaluation loop cut to what runs.
"""
import torch as t
from torch import nn

init = nn.init.xavier_uniform_


class GCNLayer(nn.Module):
    def __init__(self, latdim):
        super(GCNLayer, self).__init__()
        self.W = nn.Parameter(init(t.empty(latdim, latdim)))

    def forward(self, adj, embeds):
        return adj @ embeds  # @ self.W (Performs better without W)


class GCCF(nn.Module):
    def __init__(self, adj, user_num, item_num, embedding_size=8, layer_num=2, reg_weight=1e-4):
        super(GCCF, self).__init__()
        self.adj = adj
        self.user_num, self.item_num = user_num, item_num
        self.layer_num = layer_num
        self.reg_weight = reg_weight
        self.user_embeds = nn.Parameter(init(t.empty(self.user_num, embedding_size)))
        self.item_embeds = nn.Parameter(init(t.empty(self.item_num, embedding_size)))
        self.gcnLayers = nn.Sequential(*[GCNLayer(embedding_size) for i in range(self.layer_num)])
        self.is_training = True

    def forward(self, adj=None):
        if adj is None:
            adj = self.adj
        if not self.is_training:
            return self.final_embeds[:self.user_num], self.final_embeds[self.user_num:], None
        embeds = t.concat([self.user_embeds, self.item_embeds], axis=0)
        embeds_list = [embeds]
        for gcn in self.gcnLayers:
            embeds = gcn(adj, embeds_list[-1])
            embeds_list.append(embeds)
        embeds = t.concat(embeds_list, dim=-1)
        self.final_embeds = embeds
        return embeds[:self.user_num], embeds[self.user_num:], embeds_list[-1]

    def cal_loss(self, batch_data):
        self.is_training = True
        user_embeds, item_embeds, _ = self.forward(self.adj)
        ancs, poss, negs = batch_data
        anc_embeds, pos_embeds, neg_embeds = user_embeds[ancs], item_embeds[poss], item_embeds[negs]
        pos_preds = (anc_embeds * pos_embeds).sum(-1)
        neg_preds = (anc_embeds * neg_embeds).sum(-1)
        bpr_loss = -t.log(1e-10 + t.sigmoid(pos_preds - neg_preds)).sum() / anc_embeds.shape[0]
        reg_loss = self.reg_weight * sum(p.norm(2).square() for p in self.parameters())
        return bpr_loss + reg_loss, {"bpr_loss": bpr_loss, "reg_loss": reg_loss}

    def full_predict(self, batch_data):
        user_embeds, item_embeds, _ = self.forward(self.adj)
        self.is_training = False
        pck_users, train_mask = batch_data
        pck_users = pck_users.long()
        full_preds = user_embeds[pck_users] @ item_embeds.T
        return full_preds * (1 - train_mask) - 1e8 * train_mask


t.manual_seed(0)
U, I = 6, 7
n = U + I
adj = t.rand(n, n)
adj = (adj + adj.T) / n
model = GCCF(adj, U, I)
optimizer = t.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    model.train()
    for _ in range(4):  # Trainer.train_epoch
        optimizer.zero_grad()
        batch = (t.randint(0, U, (5,)), t.randint(0, I, (5,)), t.randint(0, I, (5,)))
        loss, loss_dict = model.cal_loss(batch)
        loss.backward()
        optimizer.step()
    model.eval()
    for users in (t.arange(0, 3), t.arange(3, 6)):  # Metric.eval: full_predict under no_grad, batch after batch
        with t.no_grad():
            preds = model.full_predict([users, t.zeros(len(users), I)])
        assert preds.shape == (len(users), I)
        assert model.final_embeds.grad_fn is None  # what the cached path returns was computed under no_grad
print("ok: 3 epochs of training and evaluation, no backward reaches a stored graph")
