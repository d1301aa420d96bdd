"""fresh21 false: yaoyao-liu/e3bm model/meta_model.py:226, 227, 228 (GS404).

Shape: a bounded inner loop inside `forward` (MAML-style, `for k in range(self.update_step)`) that calls
`torch.autograd.grad(loss, fast_weights)` (not a backward of the training loss) and accumulates
`total_logits += w_k * logits_q`, the value the method returns; the outer trainer builds its loss from it and calls
`total_loss.backward()` once per episode. The kept graphs are the ones that backward needs, bounded by update_step,
and freed with the episode; the two lists (`combination_value_list`, `basestep_value_list`) are locals never read,
holding tensors that are already in `total_logits`' graph. gradsight reads `autograd.grad` in the loop as the
loop's backward and the accumulation as a per-iteration leak. BaseLearner/HyperpriorCombination/HyperpriorBasestep
and meta_forward as in meta_model.py:20-230 (small sizes); episodes run with an outer backward, and the previous
episode's output is checked to be freed.
"""
import gc
import types
import weakref
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
args = types.SimpleNamespace(way=3, shot=1, temperature=10.0, hyperprior_init_mode='LAS',
                             hyperprior_combination_softweight=1e-4, hyperprior_basestep_softweight=1e-4)
z_dim, update_step, update_lr = 6, 5, 0.1


class BaseLearner(nn.Module):
    def __init__(self):
        super().__init__()
        self.vars = nn.ParameterList()
        self.fc1_w = nn.Parameter(torch.ones([args.way, z_dim]))
        torch.nn.init.kaiming_normal_(self.fc1_w)
        self.vars.append(self.fc1_w)

    def forward(self, input_x, the_vars=None):
        the_vars = self.vars if the_vars is None else the_vars
        return F.linear(F.normalize(input_x, p=2, dim=1), F.normalize(the_vars[0], p=2, dim=1))


class Hyperprior(nn.Module):
    def __init__(self, init_values, softweight):
        super().__init__()
        self.hyperprior_initialization_vars = nn.ParameterList([nn.Parameter(torch.FloatTensor([v])) for v in init_values])
        self.fc_w = nn.Parameter(torch.ones([update_step, z_dim * 2]))
        torch.nn.init.kaiming_normal_(self.fc_w)
        self.fc_b = nn.Parameter(torch.zeros(update_step))
        self.softweight = softweight

    def forward(self, input_x, grad, step_idx):
        net = torch.cat((input_x.mean(dim=0), grad[0].mean(dim=0)), 0)
        net = F.linear(net, self.fc_w, self.fc_b)[step_idx]
        return self.hyperprior_initialization_vars[step_idx] + self.softweight * net


encoder = nn.Linear(10, z_dim)
base_learner = BaseLearner()
comb = Hyperprior([0.0] * (update_step - 1) + [1.0], args.hyperprior_combination_softweight)
step = Hyperprior([update_lr] * update_step, args.hyperprior_basestep_softweight)
label_shot = torch.arange(args.way).repeat(args.shot)
opt = torch.optim.Adam(list(encoder.parameters()) + list(comb.parameters()) + list(step.parameters()), lr=1e-3)


def meta_forward(data_shot, data_query):
    embedding_query = encoder(data_query)
    embedding_shot = encoder(data_shot)
    embedding_shot = embedding_shot - embedding_shot.mean(-1).unsqueeze(-1)
    embedding_query = embedding_query - embedding_query.mean(-1).unsqueeze(-1)
    with torch.no_grad():
        base_learner.fc1_w.data = embedding_shot
    fast_weights = base_learner.vars
    combination_value_list, basestep_value_list = [], []
    logits_q = base_learner(embedding_query, fast_weights)
    total_logits = 0.0 * logits_q
    for k in range(0, update_step):
        logits = base_learner(embedding_shot, fast_weights) * args.temperature
        loss = F.cross_entropy(logits, label_shot)
        grad = torch.autograd.grad(loss, fast_weights)
        generated_combination_weights = comb(embedding_shot, grad, k)
        generated_basestep_weights = step(embedding_shot, grad, k)
        fast_weights = list(map(lambda p: p[1] - generated_basestep_weights * p[0], zip(grad, fast_weights)))
        logits_q = base_learner(embedding_query, fast_weights) * args.temperature
        total_logits += generated_combination_weights * logits_q           # meta_model.py:226
        combination_value_list.append(generated_combination_weights)       # :227
        basestep_value_list.append(generated_basestep_weights)             # :228
    return total_logits


prev = None
for episode in range(6):
    logits = meta_forward(torch.randn(args.way * args.shot, 10), torch.randn(6, 10))
    total_loss = F.cross_entropy(logits, torch.arange(args.way).repeat(2))
    opt.zero_grad()
    total_loss.backward()                      # meta_trainer.py:191
    assert comb.fc_w.grad is not None and step.fc_w.grad is not None
    opt.step()
    if prev is not None:
        gc.collect()
        assert prev() is None, "previous episode's output still alive"
    prev = weakref.ref(logits)
    del logits, total_loss
print("OK: the accumulated logits are the forward's output, backwarded once per episode and freed after it")
