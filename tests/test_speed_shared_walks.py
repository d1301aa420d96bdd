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


NESTED = '''import torch


@torch.no_grad()
def outer(x, f=lambda y: y + 1):
    def inner(z): return z * 2; w = 3
    class Local:
        @staticmethod
        @torch.no_grad()
        def m(a,
              b=(lambda c: c)(1)):
            return [a for a in range(b)]
    async def later():
        async with ctx() as c:
            return await c
    return inner(x) + f(x); y = 1


class Net(torch.nn.Module):
    attr = [i for i in range(3)]

    @property
    def prop(self): return self.attr

    def forward(self, x):
        def helper(q):
            return q
        return helper(x)
'''


def _enclosing_by_parents(tree):
    parent = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node

    def find(node, kinds):
        node = parent.get(node)
        while node is not None and not isinstance(node, kinds):
            node = parent.get(node)
        return node
    return find


def test_enclosing_definitions_by_position_match_parent_links():
    """`Query.enclosing` answers for function and class definitions from positions (no parent links of a large
    class on every keystroke); on every node of nested, decorated, one-line and `;`-joined definitions, and of
    this project's own engine modules (code not written for the test), it names the same ancestor as the parent
    links do."""
    import pathlib
    import gradsight.engine as eng
    texts = [NESTED] + [p.read_text() for p in sorted(pathlib.Path(eng.__file__).parent.glob("*.py"))[:12]]
    kinds_list = [(ast.FunctionDef, ast.AsyncFunctionDef), (ast.ClassDef,), (ast.FunctionDef,),
                  (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)]
    checked = 0
    for text in texts:
        tree = ast.parse(text)
        q = Query(tree, {"torch": "torch"}, {}, NodeMemo(), "x.py")
        find = _enclosing_by_parents(tree)
        for node in ast.walk(tree):
            if not hasattr(node, "end_lineno") or node is tree:
                continue
            for kinds in kinds_list:
                assert q.enclosing(node, kinds) is find(node, kinds), (ast.dump(node)[:80], kinds)
                checked += 1
    assert checked > 10000
    # A node of another tree, on a line inside `outer`: no enclosing definition here.
    other = ast.parse("\n" * 9 + "def f():\n    x = 1\n").body[0].body[0]
    assert Query(ast.parse(NESTED), {}, {}, NodeMemo(), "x.py").enclosing(other, (ast.FunctionDef,)) is None


def test_a_survey_runs_once_per_statement_object_and_answers_as_a_fresh_one():
    """`Query.per_statement` keeps each top-level statement's survey with the statement object: a second version
    that reuses all statements but one surveys that one only, and answers what a query without the memo does."""
    memo = NodeMemo()
    seen = []

    def calls_of(top):
        seen.append(top.stmt)
        return [c.func.attr for c in top.calls if isinstance(c.func, ast.Attribute)]

    tree = ast.parse(SRC)
    first = Query(tree, {}, {}, memo, "x.py").surveyed("test.calls", calls_of)
    assert len(seen) == len(tree.body)
    edited = ast.parse(SRC.replace("y = x * 2", "y = x.double()"))
    cls = next(i for i, s in enumerate(tree.body) if isinstance(s, ast.ClassDef))
    spliced = ast.Module(body=tree.body[:cls] + [edited.body[cls]] + tree.body[cls + 1:], type_ignores=[])
    seen.clear()
    second = Query(spliced, {}, {}, memo, "x.py").surveyed("test.calls", calls_of)
    assert seen == [edited.body[cls]]
    assert second == Query(spliced, {}, {}, None, "x.py").surveyed("test.calls", calls_of)
    assert "double" in second and "double" not in first


def test_an_edit_resurveys_only_the_edited_statement_for_a_rule(monkeypatch):
    """Through the engine: GS109's survey of `no_grad` calls runs, after an edit inside one function, for that
    function's statement alone, and the findings equal a fresh engine's."""
    from gradsight.rules import gs109_no_grad_around_gradient_call as gs109
    text = ("import torch\n\n\ndef a(x):\n    with torch.no_grad():\n        return x * 2\n\n\n"
            "def b(x):\n    return x + 1\n\n\ndef c(x):\n    return x - 1\n")
    seen = []
    orig = gs109._off_calls
    monkeypatch.setattr(gs109, "_off_calls", lambda top: (seen.append(top.stmt.lineno), orig(top))[1])
    engine = Engine()
    engine.analyze(text, "m.py", None, None, rules=RULES)
    assert sorted(seen) == [1, 4, 9, 13]
    seen.clear()
    edited = text.replace("return x + 1", "return x + 2")
    warm = engine.analyze(edited, "m.py", None, None, rules=RULES)
    assert seen == [9]
    fresh = Engine().analyze(edited, "m.py", None, None, rules=RULES)
    assert [repr(f) for f in warm.findings] == [repr(f) for f in fresh.findings]
