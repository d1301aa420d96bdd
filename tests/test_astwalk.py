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
