"""`engine/fresh_locals.py`: which in-place writes go into a tensor the function made itself, unreferenced."""
import ast

from gradsight.engine.fresh_locals import fresh_writes


def _noted(src: str) -> list:
    fn = ast.parse(src).body[0]
    ok = fresh_writes(fn)
    out = []
    for n in ast.walk(fn):
        if id(n) in ok:
            out.append(n.lineno)
    return sorted(out)


def test_rebound_argument_is_fresh():
    assert _noted("def f(x, g):\n    x.add_(g)\n    x = x / 2\n    x.scatter_(1, g, g * 2)\n    return x\n") == [4]


def test_factory_receiver_and_subscript_store():
    assert _noted("def f(x):\n    t = torch.empty_like(x).fill_(0)\n    b = torch.zeros(3)\n    b[0] = x\n") == [2, 4]


def test_alias_before_write_is_not_fresh():
    assert _noted("def f(x, out):\n    t = x * 2\n    out.append(t)\n    t.add_(1)\n") == []
    assert _noted("def f(x):\n    t = x * 2\n    v = t.view(-1)\n    t.add_(1)\n    return v\n") == []


def test_alias_late_in_a_loop_reaches_the_next_iteration():
    assert _noted("def f(x, kept):\n    t = x * 2\n    for _ in range(3):\n        t.add_(1)\n"
                  "        kept.append(t)\n") == []


def test_branch_fresh_on_one_path_only():
    assert _noted("def f(x, c):\n    if c:\n        x = x * 2\n    x.add_(1)\n") == []


def test_closure_reference():
    assert _noted("def f(x):\n    t = x * 2\n    get = lambda: t\n    t.add_(1)\n    return get\n") == []
    assert _noted("def f(x):\n    def dev():\n        return t.device\n    t = x * 2\n    t.add_(1)\n") == [5]
