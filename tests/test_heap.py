"""The heap model (docs/heap.md): storage shared by views and aliases, containers, object state across method
calls, module alternatives, and evidence from use. Each test states the runtime behaviour it models; the buggy
programs raise (or misbehave) under torch 2.13 as the comment says, the clean ones run."""

import textwrap
from types import SimpleNamespace

import pytest

from gradsight import analysis
from gradsight.analysis import analyze_source
from gradsight.engine.interp import Interpreter, ModuleScope
from gradsight.engine.report import Source
from gradsight.findings import Severity


def _findings(src: str, name: str):
    analysis.ENGINE.units.clear()
    result = analyze_source(textwrap.dedent(src), f"/heap/{name}.py")
    assert not result.problems, result.problems
    return [f for f in result.findings if f.severity.rank >= Severity.WARNING.rank]


def _codes(src: str, name: str):
    return [(f.code, f.line) for f in _findings(src, name)]


def test_inplace_through_detached_alias_hits_saved_storage():
    # exp saves its output; `preview` shares its storage and version counter: backward raises.
    src = """\
    import torch
    g = torch.randn(3, requires_grad=True)
    e = torch.exp(g)
    preview = e.detach()
    preview.clamp_(max=1.0)
    e.sum().backward()
    """
    assert _codes(src, "alias") == [("GS301", 5)]


def test_inplace_on_a_clone_is_not_an_alias():
    src = """\
    import torch
    g = torch.randn(3, requires_grad=True)
    e = torch.exp(g)
    preview = e.detach().clone()
    preview.clamp_(max=1.0)
    e.sum().backward()
    """
    assert _codes(src, "clone") == []


def test_loop_variable_index_is_a_view_saved_by_a_module():
    # Linear saves the view trace[k]; the write into trace bumps the shared version counter.
    src = """\
    import torch
    import torch.nn as nn
    cell = nn.Linear(4, 4)
    trace = torch.zeros(3, 4)
    for k in range(2):
        trace[k + 1] = cell(trace[k])
    trace.sum().backward()
    """
    assert _codes(src, "index_view") == [("GS301", 6)]


def test_tensor_index_copies():
    # Indexing with a tensor copies: writing into `trace` does not touch what Linear saved.
    src = """\
    import torch
    import torch.nn as nn
    cell = nn.Linear(4, 4)
    trace = torch.zeros(3, 4)
    idx = torch.tensor([0])
    out = cell(trace[idx])
    trace[1] = 0.0
    out.sum().backward()
    """
    assert _codes(src, "index_copy") == []


def test_sequential_of_a_comprehension_runs_its_blocks():
    src = """\
    import torch
    import torch.nn as nn


    class Damp(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, z):
            h = self.lin(z)
            z.mul_(0.5)
            return h + z


    stack = nn.Sequential(*[Damp() for _ in range(2)])
    stack(torch.randn(2, 4)).sum().backward()
    """
    assert _codes(src, "sequential") == [("GS301", 12)]


def test_attribute_state_persists_across_calls():
    # The cache is filled on the first call and reused by the second, after its graph was freed.
    src = """\
    import torch
    import torch.nn as nn


    class Lut(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4))
            self.cached = None

        def forward(self, i):
            if self.cached is None:
                self.cached = torch.tanh(self.w) * 2
            return self.cached[i]


    lut = Lut()
    for _ in range(2):
        lut(torch.tensor([0, 1])).sum().backward()
    """
    # GS402 (the second backward goes through the freed graph) and GS475 (a cache filled once keeps the first
    # call's graph) stand on the same store: the same bug, seen from the engine and from the syntax.
    assert _codes(src, "cache") == [("GS402", 13), ("GS475", 13)]


def test_attribute_recomputed_each_call_is_clean():
    src = """\
    import torch
    import torch.nn as nn


    class Lut(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4))
            self.cached = None

        def forward(self, i):
            self.cached = torch.tanh(self.w) * 2
            return self.cached[i]


    lut = Lut()
    for _ in range(2):
        lut(torch.tensor([0, 1])).sum().backward()
    """
    assert _codes(src, "recompute") == []


def test_names_bound_to_different_modules_are_joined():
    # Either class has parameters: the update loop modifies leaves that require grad in place.
    src = """\
    import sys
    import torch
    import torch.nn as nn


    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = nn.Linear(2, 2)

        def forward(self, x):
            return self.f(x)


    class B(A):
        pass


    model = A() if len(sys.argv) > 1 else B()
    model(torch.randn(3, 2)).sum().backward()
    for p in model.parameters():
        p.add_(p.grad, alpha=-0.1)
    """
    assert _codes(src, "alternatives") == [("GS302", 22)]


def test_constant_defaults_and_reduction_shapes():
    # mean(dim=0) of a (5, 3) output is (3,): backward without a gradient raises; reported where it is made.
    src = """\
    import torch
    import torch.nn as nn


    def scale(t, by=2.0):
        return t * by


    f = nn.Linear(4, 3)
    per_output = scale(f(torch.randn(5, 4))).mean(dim=0)
    per_output.backward()
    """
    assert _codes(src, "shapes") == [("GS403", 10), ("GS403", 11)]


def test_loaded_model_is_evidence_so_a_warning():
    src = """\
    import torch
    model = torch.load("model.pt", weights_only=False)
    out = model(torch.rand(1, 3))
    print(out.numpy())
    """
    found = _findings(src, "loaded")
    assert [(f.code, f.line, f.severity) for f in found] == [("GS201", 4, Severity.WARNING)]


def test_backwarded_value_in_a_logged_dict_kept_by_the_object():
    src = """\
    class Trainer:
        def __init__(self, model, opt):
            self.model = model
            self.opt = opt
            self.history = []

        def step(self, x):
            loss = self.model(x).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            stats = {}
            stats["loss"] = loss
            self.history.append(stats)
    """
    assert _codes(src, "history") == [("GS404", 14)]


def test_logged_item_is_clean():
    src = """\
    class Trainer:
        def __init__(self, model, opt):
            self.model = model
            self.opt = opt
            self.history = []

        def step(self, x):
            loss = self.model(x).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.history.append({"loss": loss.item()})
    """
    assert _codes(src, "history_item") == []


def test_library_inference_hook_classifies_unresolved_results():
    # The driver may install `libinfer`; a module it names is called like one, at evidence strength.
    text = "import torch\nimport lib\nmodel = lib.load()\nprint(model(torch.ones(2)).numpy())\n"
    import ast

    tree = ast.parse(text)
    scope = ModuleScope("/heap/lib_user.py", tree, Source(text))
    scope.imports = {"torch": "torch", "lib": "lib"}
    events = []
    interp = Interpreter(scope, events.append)
    interp.root_path = scope.path
    asked = []

    class Infer:
        def classify(self, text, path, line, column):
            asked.append((line, column))
            return SimpleNamespace(qualname="lib.Model", is_module=True, is_optimizer=False)

    interp.libinfer = Infer()
    from gradsight.engine.state import State

    interp.exec_block(tree.body, State())
    assert asked == [(3, 0)]
    numpy = [e for e in events if type(e).__name__ == "NumpyEvent"]
    assert len(numpy) == 1 and numpy[0].target.evidence


@pytest.mark.parametrize("free, flagged", [(False, 1), (True, 0)])
def test_library_module_without_parameters_keeps_its_inputs_grad_state(free, flagged):
    # A library module class whose code creates no parameter (`LibClass.param_free`, ColBERT's `Maxsim`) called on
    # a tensor that does not require grad gives one that does not either: `.numpy()` on it is fine.
    text = "import torch\nimport lib\nsim = lib.Maxsim()\nprint(sim(torch.ones(2)).numpy())\n"
    import ast

    tree = ast.parse(text)
    scope = ModuleScope("/heap/lib_free.py", tree, Source(text))
    scope.imports = {"torch": "torch", "lib": "lib"}
    events = []
    interp = Interpreter(scope, events.append)
    interp.root_path = scope.path

    class Infer:
        def classify(self, text, path, line, column):
            return SimpleNamespace(qualname="lib.Maxsim", is_module=True, is_optimizer=False, param_free=free)

    interp.libinfer = Infer()
    from gradsight.engine.state import State

    interp.exec_block(tree.body, State())
    numpy = [e for e in events if type(e).__name__ == "NumpyEvent" and e.target.rg.name == "YES"]
    assert len(numpy) == flagged


def test_output_of_an_optimized_unknown_model_has_a_graph_as_evidence():
    # `model` comes from code gradsight cannot see, but an optimizer trains its parameters: its output in grad
    # mode has a graph (evidence from use, so a warning); under no_grad it does not.
    src = """\
    import torch
    from somewhere import build

    model = build()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    out = model(torch.randn(2, 3))
    print(out.numpy())
    with torch.no_grad():
        print(model(torch.randn(2, 3)).numpy())
    """
    found = _findings(src, "evidence_model")
    assert [(f.code, f.line, f.severity) for f in found] == [("GS201", 7, Severity.WARNING)]


def test_parameters_of_an_unseen_model_are_leaves_that_require_grad():
    # A manual SGD step in grad mode on the parameters of a model from elsewhere: torch raises "a leaf Variable
    # that requires grad is being used in an in-place operation". Under no_grad it is the correct update.
    src = """\
    import torch
    from somewhere import build

    model = build()
    model(torch.randn(2, 3)).sum().backward()
    for p in model.parameters():
        p.add_(p.grad, alpha=-0.1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-0.1)
    """
    assert _codes(src, "unseen_params") == [("GS302", 7)]


def test_item_store_at_an_unknown_index_forgets_the_list():
    # `ws[i] = ws[i].detach()` makes item i a new leaf; setting its flag then runs. Before, a list with known items
    # kept them through the store, and the read gave the computed item back (a GS209 error; DeepRobust's Meta-Self).
    src = """\
    import torch
    ws = [torch.randn(3, requires_grad=True) * 2, torch.randn(3, requires_grad=True) * 2]
    for i in range(len(ws)):
        ws[i] = ws[i].detach()
        ws[i].requires_grad = True
    """
    assert _codes(src, "item_store") == []


def test_loop_freezing_parameters_freezes_the_module():
    # Runs: the loop freezes the layer, so the copy into its weight is no in-place op on a leaf that requires grad,
    # and its output has no graph (solo-learn's DeepClusterV2). Then the backward raises "element 0 of tensors does
    # not require grad".
    src = """\
    import torch
    import torch.nn as nn
    layer = nn.Linear(4, 3, bias=False)
    for p in layer.parameters():
        p.requires_grad = False
    layer.weight.copy_(torch.randn(3, 4))
    print(layer(torch.randn(2, 4)).numpy())
    layer(torch.randn(2, 4)).sum().backward()
    """
    assert _codes(src, "freeze_loop") == [("GS401", 8)]


def test_freezing_under_a_condition_leaves_it_open():
    # Only the bias is frozen: the weight still requires grad, so the output has a graph (`.numpy()` would raise).
    # Whether each parameter is frozen is not known, so nothing is claimed either way.
    src = """\
    import torch
    import torch.nn as nn
    layer = nn.Linear(4, 1)
    for name, p in layer.named_parameters():
        if name == "bias":
            p.requires_grad = False
    out = layer(torch.randn(2, 4))
    out.sum().backward()
    """
    assert _codes(src, "freeze_some") == []


def test_a_new_head_or_a_thawed_parameter_unfreezes_the_module_above():
    # The fine-tuning recipe: freeze a loaded model, replace its head, train. The new head's parameters require
    # grad, so the loss does and the backward runs; so does a frozen layer whose weight is made trainable again.
    src = """\
    import torch
    import torch.nn as nn
    model = torch.load("model.pt", weights_only=False)
    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(512, 2)
    loss = model(torch.randn(2, 3, 32, 32)).sum()
    loss.backward()
    layer = nn.Linear(4, 1)
    layer.requires_grad_(False)
    layer.weight.requires_grad = True
    layer(torch.randn(2, 4)).sum().backward()
    """
    assert _codes(src, "thaw") == []


def test_save_whose_graph_dies_with_the_call_is_dropped():
    # `print(F.softplus(self.w))` builds a graph nothing keeps: the next `reset_parameters()` writes `w.data` before the
    # line that saves it, and no backward reads the old save (runs cleanly, gradients right). The `with ... as` is
    # there because reading its target once crashed the pruning (`_graph_homes`).
    src = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Bayes(nn.Module):
        def __init__(self, init_log_var):
            super().__init__()
            self.init_log_var = init_log_var
            self.w = nn.Parameter(torch.empty(3))
            self.reset_parameters()

        def reset_parameters(self):
            self.w.data.fill_(self.init_log_var)
            with torch.no_grad() as _:
                pass
            print(F.softplus(self.w))


    m = Bayes(-3.0)
    m.reset_parameters()
    F.softplus(m.w).sum().backward()
    """
    assert _codes(src, "dead_save") == []


def test_save_whose_graph_the_call_keeps_stays():
    # `__init__` keeps the graph that saved `w` in `self.std`: a later `.data` write changes what a backward through
    # `m.std` reads (m.w.grad is sigmoid(2.0), not sigmoid(-3.0): silently wrong).
    src = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Bayes(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.full((3,), -3.0))
            self.std = F.softplus(self.w)


    m = Bayes()
    m.w.data.fill_(2.0)
    m.std.sum().backward()
    """
    assert _codes(src, "kept_save") == [("GS204", 14)]
