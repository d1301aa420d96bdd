"""Facts are data (`values.Fact`: a kind and structured arguments); words are made from `words.FACT_WORDS` only
when shown. These checks read the engine's source: every fact it makes names a kind that has words, passes
every argument the words need, and no decision in the engine or the rules reads a fact's words."""

from __future__ import annotations

import ast
import pathlib
import string

from gradsight.engine.values import Fact
from gradsight.engine.words import FACT_WORDS, render

PKG = pathlib.Path(__file__).resolve().parent.parent / "server" / "gradsight"


def fields(template: str) -> set:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def fact_calls():
    """(file, line, kind, argument names) for every `self.fact(node, kind, ...)`, `self.expr_fact(node, kind)` and
    `Fact(line, column, kind, args, ...)` in the engine, with a constant kind (or a conditional between two)."""
    out = []
    for path in sorted((PKG / "engine").glob("*.py")):
        for call in (n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)):
            f = call.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "fact" and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                    and f.value.id == "self" and len(call.args) >= 2:
                kind_node, names = call.args[1], {k.arg for k in call.keywords}
            elif name == "expr_fact" and isinstance(f, ast.Attribute):
                kind_node = call.args[1] if len(call.args) >= 2 else ast.Constant("expr")
                names = {"expr"}
            elif name == "Fact" and len(call.args) >= 4 and isinstance(call.args[3], ast.Tuple):
                kind_node = call.args[2]
                names = {e.elts[0].value for e in call.args[3].elts if isinstance(e, ast.Tuple)}
            else:
                continue
            kinds = [kind_node.body, kind_node.orelse] if isinstance(kind_node, ast.IfExp) else [kind_node]
            for k in kinds:
                out.append((path.name, call.lineno, k, names, call))
    return out


def kind_value(node):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):  # a kind constant of `words`
        import gradsight.engine.words as words

        return getattr(words, node.id, None)  # None: a variable (`kind` passed through a helper)
    return None


def test_every_fact_kind_has_words_and_gets_its_arguments():
    calls = fact_calls()
    assert len(calls) > 50  # the check sees the engine's facts
    for file, line, node, names, call in calls:
        kind = kind_value(node)
        if kind is None:
            continue  # a kind passed through (`expr_fact(node, kind)` inside `fact` helpers)
        assert kind in FACT_WORDS, f"{file}:{line}: kind {kind!r} has no words"
        if any(k.arg is None for k in call.keywords):
            continue  # `**what`: checked below by rendering
        missing = fields(FACT_WORDS[kind]) - names
        assert not missing, f"{file}:{line}: {kind!r} needs {missing}"


def test_words_render_from_arguments_only():
    fact = Fact(3, 4, "saved-by", (("op", "torch.exp"),))
    assert fact.text == "saved for backward by `torch.exp`"
    assert fact.arg("op") == "torch.exp" and fact.arg("expr") is None
    # The same step in other words is the same fact: equality and hashing never involve the words.
    assert fact == Fact(3, 4, "saved-by", (("op", "torch.exp"),)) and hash(fact) == hash(Fact(3, 4, "saved-by",
                                                                                                  (("op", "torch.exp"),)))
    assert render("no-such-kind", ()) == "no-such-kind"


def test_no_decision_reads_a_facts_words():
    # `.text` of a fact may be shown (messages, hovers) but never compared, searched or tested.
    for path in [*sorted((PKG / "engine").glob("*.py")), *sorted((PKG / "rules").glob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "text" and node.attr in ("startswith", "endswith", "isidentifier",
                                                                     "find", "index", "count", "split"):
                base = ast.unparse(node.value.value)
                assert base in ("self", "source", "report.source", "src", "self.src"), \
                    f"{path.name}:{node.lineno}: `{ast.unparse(node)}` reads a fact's words"
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq))
                                                     for op in node.ops):
                for side in [node.left, *node.comparators]:
                    if isinstance(side, ast.Attribute) and side.attr in ("text", "label", "summary") \
                            and ast.unparse(side.value) not in ("self", "previous", "source", "report.source"):
                        raise AssertionError(f"{path.name}:{node.lineno}: `{ast.unparse(node)}` decides on words")
