"""The `Engine` owns every cache of the analysis: separate engines share nothing, `clear()` makes the next analysis
cold, and no engine module keeps a cache of its own at module level (docs/ARCHITECTURE.md, `engine.py`)."""

import ast
import pathlib

from gradsight.analysis import analyze_source
from gradsight import analysis
from gradsight.engine.engine import Engine

PKG = pathlib.Path(__file__).resolve().parent.parent / "server" / "gradsight"
# The engine modules of the STRUCT lane: the driver and what was split out of it, and their helpers.
OWNED = ["driver.py", "engine.py", "scope.py", "incremental.py", "chunks.py", "units.py", "relocate.py", "report.py",
         "cache.py", "sources.py", "ruleset.py"]

TEXT = ("import torch\n\n\ndef f():\n    x = torch.randn(3, requires_grad=True)\n    y = torch.sigmoid(x)\n"
        "    y.mul_(2)\n    y.sum().backward()\n")


def test_engines_share_no_cache():
    a, b = Engine(), Engine()
    got = a.analyze(TEXT, "/api/one.py", rules=analysis.RULES)
    assert [f.code for f in got.findings] == ["GS301"]
    assert len(a.units) and "/api/one.py" in a.files
    assert not len(b.units) and not b.files
    assert [f.to_json() for f in b.analyze(TEXT, "/api/one.py", rules=analysis.RULES).findings] == [f.to_json() for f in got.findings]


def test_clear_makes_the_next_analysis_cold():
    e = Engine()
    e.analyze(TEXT, "/api/two.py", rules=analysis.RULES)
    e.analyze(TEXT.replace("mul_(2)", "mul_(3)"), "/api/two.py", rules=analysis.RULES)
    assert e.stats["spliced"] == 1 and e.stats["parsed"] == 1
    e.clear()
    assert not e.files and not len(e.units)
    e.analyze(TEXT, "/api/two.py", rules=analysis.RULES)
    assert e.stats["parsed"] == 2
    e.reset_stats()
    assert set(e.stats.values()) == {0}


def test_default_engine_is_behind_analyze_source():
    analysis.ENGINE.forget("/api/three.py")
    before = analysis.ENGINE.stats["parsed"]
    analyze_source(TEXT, "/api/three.py")
    assert analysis.ENGINE.stats["parsed"] == before + 1
    assert "/api/three.py" in analysis.ENGINE.files


def module_caches(path: pathlib.Path) -> list:
    """Names bound at module or class level to an empty mutable container (how every cache starts): `{}`, `[]`,
    `dict()`, `OrderedDict()`, `set()`, `threading.local()` and the like."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    makers = {"dict", "list", "set", "OrderedDict", "defaultdict", "local", "WeakValueDictionary", "WeakKeyDictionary",
              "deque"}
    out = []
    scopes = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in scopes:
        for node in body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            empty = (isinstance(value, (ast.Dict, ast.List, ast.Set)) and not getattr(value, "keys", None)
                     and not getattr(value, "elts", None))
            if isinstance(value, ast.Call):
                fn = value.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                empty = name in makers
            if empty:
                out += [ast.unparse(t) for t in targets]
    return out


def test_no_module_level_cache_in_engine_modules():
    for name in OWNED:
        assert module_caches(PKG / "engine" / name) == [], name


def test_cache_check_sees_planted_caches(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("import threading\nfrom collections import OrderedDict\nA = {}\nB: dict = dict()\n"
                 "C = OrderedDict()\nD = threading.local()\nOK = {'x': 1}\nclass K:\n    _pairs = OrderedDict()\n")
    assert module_caches(f) == ["A", "B", "C", "D", "_pairs"]


def test_no_engine_module_over_1200_lines():
    for p in sorted((PKG / "engine").glob("*.py")):
        assert len(p.read_text(encoding="utf-8").splitlines()) <= 1200, p.name


MOVING = ("import torch\n\n\ndef train():\n    w = torch.ones(3, requires_grad=True)\n    loss = (w.exp() * w).sum()\n"
          "    loss.backward()\n    loss.backward()\n")


def test_positions_in_messages_are_data_and_move_with_edits():
    """A message that names a line ("the earlier backward is at line 7") keeps that line as data: after lines are
    inserted above the function, its cached result is moved (not recomputed) and says the new line, exactly
    as a cold analysis does. No string is rewritten: the engine has no marked digits."""
    e = Engine()
    first = e.analyze(MOVING, "/api/move.py", rules=analysis.RULES)
    [f] = [f for f in first.findings if f.code == "GS402"]
    assert "line 7" in f.message
    moved = e.stats["moved"]
    shifted = MOVING.replace("\ndef train", "\n\ndef train", 1)  # Enter above the definition
    warm = e.analyze(shifted, "/api/move.py", rules=analysis.RULES)
    assert e.stats["moved"] > moved  # the definition's results were moved, not recomputed
    cold = Engine().analyze(shifted, "/api/move.py", rules=analysis.RULES)
    assert [x.to_json() for x in warm.findings] == [x.to_json() for x in cold.findings]
    [g] = [g for g in warm.findings if g.code == "GS402"]
    assert "line 8" in g.message and g.line == f.line + 1
    assert all(type(x.message) is str for x in warm.findings)  # results leave the engine as plain strings
    engine_src = "".join(p.read_text(encoding="utf-8") for p in (PKG / "engine").glob("*.py"))
    assert not any("\u0660" <= ch <= "\u0669" for ch in engine_src)
