"""GS475 false: LUOyk1999/tunedGNN medium_graph/GTs_baselines/network/multi_model.py:111.

`MultiModel.forward` fills `self.expander_edges = generate_random_expander(edge_index).to(edge_index.device)` once and
reuses it. `generate_random_expander` (network/expander_edges.py) reads only `x.shape[0]` of the edge index, draws a
random regular graph with NumPy, and returns `torch.cat([torch.tensor(senders, dtype=torch.long).view(-1, 1),
torch.tensor(receivers, dtype=torch.long).view(-1, 1)], dim=1)` (transposed here to the (2, E) layout the encoder concatenates with), an integer tensor made from Python lists, with no
graph and nothing computed from the network's parameters. Later calls reuse it and every training step backwards
without error. The helper is the repository's, cut to its 'Random-d' path without the spectral-gap check.
"""
import numpy as np
import torch


def generate_random_regular_graph1(num_nodes, degree, rng=None):
    if rng is None:
        rng = np.random.default_rng()
    senders = [*range(0, num_nodes)] * degree
    receivers = []
    for _ in range(degree):
        receivers.extend(rng.permutation(list(range(num_nodes))).tolist())
    senders, receivers = [*senders, *receivers], [*receivers, *senders]
    return np.array(senders), np.array(receivers)


def generate_random_expander(x, degree=3, rng=None, exp_index=0):
    num_nodes = x.shape[0]
    max_senders, max_receivers = generate_random_regular_graph1(num_nodes, degree, rng)
    max_senders = torch.tensor(max_senders, dtype=torch.long).view(-1, 1)
    max_receivers = torch.tensor(max_receivers, dtype=torch.long).view(-1, 1)
    if exp_index == 0:
        expander_edges = torch.cat([max_senders, max_receivers], dim=1).t()  # (2, E) like edge_index
    return expander_edges


class ExpanderEdgeFixer(torch.nn.Module):  # the repository's encoder with add_edge_index=True, num_virt_node=0
    def forward(self, x, edge_index, expander_edges):
        return torch.cat([edge_index, expander_edges], dim=1)


class MultiModel(torch.nn.Module):
    def __init__(self, dim_in, dim_inner, dim_out):
        super().__init__()
        self.encoder = ExpanderEdgeFixer()
        self.pre_mp = torch.nn.Linear(dim_in, dim_inner)
        self.expander_edges = None
        self.post_mp = torch.nn.Linear(dim_inner, dim_out)

    def forward(self, x, edge_index):
        if self.expander_edges is None:
            self.expander_edges = generate_random_expander(edge_index).to(edge_index.device)
        edge_index = self.encoder(x, edge_index, self.expander_edges)
        src, dst = edge_index  # one message passing step over the combined edge index, as the layers do
        x = self.pre_mp(x)
        x = x + torch.zeros_like(x).index_add(0, dst, x[src])
        return self.post_mp(x)


torch.manual_seed(0)
x = torch.randn(20, 4)
edge_index = torch.randint(0, 20, (2, 40))
y = torch.randint(0, 3, (20,))
model = MultiModel(4, 8, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(5):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x, edge_index), y)
    loss.backward()  # the cached edges carry no graph: no "backward through the graph a second time"
    opt.step()
    assert model.expander_edges.dtype == torch.long and not model.expander_edges.requires_grad
    assert model.expander_edges.grad_fn is None
print("ok: 5 steps reuse the cached integer expander edges")
