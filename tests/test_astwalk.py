"""`engine.astwalk.walk` must give exactly `ast.walk`'s nodes in `ast.walk`'s order (rules that stop at the first
match, such as the first backward of a loop, depend on the order)."""

from __future__ import annotations

import ast
import pathlib

from gradsight.engine.astwalk import children, walk

SERVER = pathlib.Path(__file__).resolve().parents[1] / "server" / "gradsight"


def test_walk_and_children_match_ast_on_the_engines_own_sources():
    files = sorted(SERVER.rglob("*.py"))[:40]
    assert len(files) >= 20
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        ours, theirs = walk(tree), list(ast.walk(tree))
        assert len(ours) == len(theirs) and all(a is b for a, b in zip(ours, theirs)), path
        for node in theirs[:200]:
            assert [id(c) for c in children(node)] == [id(c) for c in ast.iter_child_nodes(node)]


def test_walk_and_children_match_ast_on_nodes_built_by_hand():
    """Fields given as keywords out of `_fields` order, a field left unset, and a subclass of a node class (found
    by the `isinstance` fallback, not the table of `ast`'s own classes)."""

    class MyName(ast.Name):
        pass

    inner = MyName(id="x", ctx=ast.Load())
    call = ast.Call(keywords=[ast.keyword(arg="k", value=ast.Constant(value=1))], args=[inner],
                    func=ast.Attribute(attr="f", value=ast.Name(id="m", ctx=ast.Load()), ctx=ast.Load()))
    partial = ast.BinOp(left=call, op=ast.Add())  # `right` left unset
    for root in (call, partial, ast.Expr(value=partial)):
        ours, theirs = walk(root), list(ast.walk(root))
        assert [id(n) for n in ours] == [id(n) for n in theirs]
        for node in theirs:
            assert [id(c) for c in children(node)] == [id(c) for c in ast.iter_child_nodes(node)]
    assert inner in walk(call)
