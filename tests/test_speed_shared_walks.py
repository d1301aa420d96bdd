"""Keystroke cost of syntax questions (docs/performance.md, "Fifteenth session"): a method's own mutations are kept
across keystrokes by its text, the whole-file query indexes what rules used to find by testing every node, and
one analysis walks a node once for all its readers. Assertions are on call counts and on equal answers, never on
wall time."""

import ast

from gradsight.analysis import RULES
from gradsight.engine import astwalk
from gradsight.engine import interp_objects
from gradsight.engine.engine import Engine
from gradsight.engine.interp_util import own_mutations
from gradsight.engine.query import NodeMemo, Query
from gradsight.engine.report import Source

SRC = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, use_bias=True):
        super().__init__()
        self.use_bias = use_bias
        self.fc = nn.Linear(4, 4)

    def helper(self, x):
        if self.use_bias:
            return self.fc(x)
        return x

    def other(self):
        self.count = 1
        return 1

    def forward(self, x):
        y = x * 2
        return self.helper(y)
'''


def test_an_edit_in_one_method_reads_only_that_methods_mutations_again(monkeypatch):
    """`if self.use_bias:` in a method `forward` calls asks which methods change the flag; the class is parsed again
    on every keystroke in it, but only the edited method's text is new."""
    seen = []
    orig = interp_objects.own_mutations
    monkeypatch.setattr(interp_objects, "own_mutations", lambda fn: (seen.append(fn.name), orig(fn))[1])
    engine = Engine()
    cold = engine.analyze(SRC, "net.py", None, None, rules=RULES)
    assert sorted(seen) == ["forward", "helper", "other"]
    seen.clear()
    edited = SRC.replace("y = x * 2", "y = x * 3")
    warm = engine.analyze(edited, "net.py", None, None, rules=RULES)
    assert seen == ["forward"]
    fresh = Engine().analyze(edited, "net.py", None, None, rules=RULES)
    assert [repr(f) for f in warm.findings] == [repr(f) for f in fresh.findings]
    assert [repr(f) for f in warm.facts] == [repr(f) for f in fresh.facts]
    assert len(cold.findings) == len(fresh.findings)


def test_own_mutations_lists_every_call_on_self_for_the_asking_class_to_filter():
    """A base class's method may call a method only a subclass defines: which names are methods is the asking
    class's business (`method_mutations`), so the answer is a function of the method's text alone."""
    fn = ast.parse("def run(self, x):\n    self.hook(x)\n    self.fc(x)\n    self.n = 1\n").body[0]
    attrs, calls = own_mutations(fn)
    assert attrs == frozenset({"n"})
    assert set(calls) == {"hook", "fc"}


def test_query_indexes_match_a_walk_of_every_node():
    text = SRC + "\ntorch.no_grad()\nprint(1)\n\n\nclass F(torch.autograd.Function):\n    pass\n"
    tree = ast.parse(text)
    q = Query(tree, {"torch": "torch", "nn": "torch.nn"}, {}, NodeMemo(), "x.py")
    every = [tree] + [n for stmt in tree.body for n in astwalk.walk(stmt)]
    assert q.nodes() == every
    assert q.call_statements == [n for n in every if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    assert q.class_defs == [n for n in every if isinstance(n, ast.ClassDef)]
    assert [c.name for c in q.subclasses("torch.autograd.Function")] == ["F"]
    assert q.module_class_names() == {"Net"}
    cls = next(s for s in tree.body if isinstance(s, ast.ClassDef))
    assert q.subtree(cls) is q.subtree(cls) and q.subtree(cls) == astwalk.walk(cls)
    inner = cls.body[1]
    assert q.subtree(inner) == astwalk.walk(inner)


def test_the_analysed_source_walks_a_node_once():
    tree = ast.parse(SRC)
    loop = tree.body[-1]
    marked, plain = Source(SRC, mark=True), Source(SRC)
    assert marked.walk(loop) is marked.walk(loop)
    assert marked.walk(loop) == astwalk.walk(loop)
    assert plain.walk(loop) is not plain.walk(loop)  # other files' sources outlive an analysis: not memoised
