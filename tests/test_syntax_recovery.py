"""Syntax-error recovery (`chunks.recover_chunks`): a file that does not parse is cut into top-level chunks; only the
chunks that do not parse are skipped (one GS001 each), everything else is analysed. The outcome is a function of
the text alone, so an analysis while typing (warm: reusing the previous version's parses and results) equals a
cold one exactly."""

import ast
import pathlib
import random

import pytest

from gradsight.analysis import analyze_source
from gradsight import analysis
from gradsight.engine.chunks import derived_parses, recover_chunks
from gradsight.analysis import RULES
from gradsight.engine.engine import Engine
from gradsight.engine.incremental import FileState
from gradsight.engine.report import split_lines
from test_speed_incremental_parse import line_edit, mutate

# Mutated text may hold invalid escape sequences: the parser warns, on both paths alike.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.py"))
SEEDS = sorted((ROOT / "tests" / "fixtures" / "seed_cases").glob("*.py"))
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.py"))[:60]
CORPUS = ROOT / "bench" / ".corpus"
CORPUS_FILES = [CORPUS / p for p in ("timm/timm/models/vision_transformer.py", "torch/torch/nn/modules/module.py",
                                     "torch/torch/nn/modules/rnn.py", "torchvision/torchvision/models/resnet.py")]

INPLACE = ("def g():\n    a = torch.randn(3, requires_grad=True)\n    b = torch.sigmoid(a)\n    b.mul_(2)\n"
           "    b.sum().backward()\n")


def full(a):
    return ([f.to_json() for f in a.findings],
            [(f.line, f.column, f.end_line, f.end_column, f.name, f.summary, f.label, f.chain, f.transition)
             for f in a.facts], a.problems, sorted(a.dependencies.items()))


def cold(text: str, path: str):
    return full(Engine().analyze(text, path, rules=RULES))  # a fresh engine: every cache empty


def codes(text: str, path: str = "recover.py"):
    analysis.ENGINE.forget(path)
    return [(f.code, f.line) for f in analyze_source(text, path).findings]


def gs001(text: str, path: str = "recover.py"):
    analysis.ENGINE.forget(path)
    return [f for f in analyze_source(text, path).findings if f.code == "GS001"]


# ---------------------------------------------------------------- what is analysed


def test_findings_after_a_broken_definition_are_still_reported():
    broken = ("import torch\n\n\ndef f():\n    x = torch.randn(3, requires_grad=True)\n    y = torch.sigmoid(x\n"
              "    return y\n\n\n" + INPLACE)
    fixed = broken.replace("sigmoid(x\n", "sigmoid(x)\n")
    assert codes(broken) == [("GS001", 6), ("GS301", 13)]
    [err] = gs001(broken)
    assert (err.line, err.column) == (6, 22) and "never closed" in err.message
    assert "skipped lines 4-9" in err.message and "rest of the file" in err.message
    want = [f for f in analyze_source(fixed, "fixed.py").findings if f.line > 9]
    got = [f for f in analyze_source(broken, "recover.py").findings if f.line > 9]
    assert [(f.code, f.line, f.column, f.message) for f in got] == [(f.code, f.line, f.column, f.message)
                                                                     for f in want]


@pytest.mark.parametrize("typed", ["def h(", "def h(x", "def h(x):", "class H(", "class H(nn.Module):", "x = (",
                                   "x = [1,", "if x", "h = 1 +", "async def h(", "@torch.no_grad(", "s = '"])
def test_half_typed_top_level_statement(typed):
    """A half-typed statement between two definitions: both definitions are still analysed, at their lines."""
    head = "import torch\nimport torch.nn as nn\n\n\n" + INPLACE.replace("def g", "def first") + "\n\n"
    text = head + typed + "\n\n\n" + INPLACE
    found = codes(text)
    assert ("GS301", 8) in found, found
    assert ("GS301", 8 + INPLACE.count("\n") + 5) in found, found
    assert [c for c, _ in found].count("GS001") == 1


def test_half_typed_decorator_belongs_to_the_definition_below():
    """`@` alone decorates the next definition, as Python reads it: that definition is skipped with it."""
    text = "import torch\n\n\n@\n\n\n" + INPLACE
    assert codes(text) == [("GS001", 4)]


def test_broken_method_keeps_the_rest_of_the_file():
    text = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        h = self.features(x\n        return h\n\n\n" + INPLACE)
    assert codes(text) == [("GS001", 7), ("GS301", 14)]


def test_no_finding_from_inside_an_unterminated_string():
    text = "import torch\n\n\ndef f():\n    s = \"\"\"\n    return s\n\n\n" + INPLACE
    assert codes(text) == [("GS001", 5)]
    # Python pairs triple quotes in order: lines 5-16 are one string, line 17 opens one that never ends.
    paired = text + '\n\nDOC = """\n"""\n\n\n' + INPLACE.replace("def g", "def g2")
    assert codes(paired) == [("GS001", 17)]
    # Here the quote on line 16 closes the string of line 5 (f parses, as Python reads it): g is text, g2 code.
    closed = text + '\n\nx = """\n\n\n' + INPLACE.replace("def g", "def g2")
    assert codes(closed) == [("GS301", 22)]


def test_unterminated_string_does_not_split_at_lines_inside_it():
    """Column-0 `def` lines inside a string are text, not chunk starts."""
    text = ("import torch\n\nDOC = '''\ndef g():\n    a = torch.randn(3, requires_grad=True)\n"
            "    b = torch.sigmoid(a)\n    b.mul_(2)\n'''\n\n\ndef broken(:\n    pass\n")
    assert codes(text) == [("GS001", 11)]


def test_decorators_stay_with_their_definition():
    """A chunk never starts between a decorator and its definition, even one whose arguments reach column 0."""
    body = ("def f():\n    x = torch.randn(3, requires_grad=True)\n    loss = (x * 2).sum()\n"
            "    loss.backward()\n")
    for deco in ("@torch.no_grad()\n", "@torch.no_grad(\n)\n", "@torch.no_grad(\n\n)\n# note\n",
                 "@torch.inference_mode(\nmode=True)\n"):
        good = "import torch\n\n\n" + deco + body
        broken = good + "\n\ndef later(:\n    pass\n"
        want = [(f.code, f.line) for f in analyze_source(good, "deco_ok.py").findings]
        assert ("GS401", want[0][1]) in want
        assert codes(broken) == want + [("GS001", good.count("\n") + 3)]


def test_open_bracket_before_a_decorated_definition():
    text = "import torch\n\nx = foo(\n\n@torch.no_grad()\n" + INPLACE
    # the definition is analysed with its decorator: backward under no_grad (GS401)
    assert codes(text) == [("GS001", 3), ("GS401", 10)]


def test_matmul_continuation_at_column_0_is_not_a_chunk_start():
    """`(a\\n@b)` is a matrix product, valid Python: a broken statement elsewhere must not cut it."""
    text = "import torch\n\nx = (torch.ones(2)\n@torch.ones(2))\ndef k():\n    pass\n\n\ndef broken(:\n    pass\n"
    assert codes(text) == [("GS001", 9)]
    got = recover_chunks(text, split_lines(text), None)
    assert [type(st).__name__ for st in got.tree.body] == ["Import", "Assign", "FunctionDef"]


def test_several_broken_chunks_each_get_one_gs001():
    text = ("import torch\n\n\ndef a(:\n    pass\n\n\n" + INPLACE + "\n\ndef b(x\n    return x\n\n\n"
            + INPLACE.replace("def g", "def g2"))
    found = codes(text)
    assert [line for c, line in found if c == "GS001"] == [4, 15]
    assert [line for c, line in found if c == "GS301"] == [11, 22]


@pytest.mark.parametrize("text, where", [
    ("import torch\nx = torch.zeros(3\n", (2, 16)),
    ("def f():\n    return 1 +\n", (2, 15)),
    ("x = 1\ndef f(:\n    pass\n", (2, 7)),
    ("x = 1\n  y = 2\n", (2, 3)),
    ("s = '''\nabc\n", (1, 5)),
    ("x = 1\n\n@dec\n\n", (4, 0)),
    ("x = 1\nfor i in range(3):\n    y = f(i))\nz = 2\n", (3, 14)),
])
def test_gs001_positions_match_python(text, where):
    """Where the text has one broken chunk, GS001 is where Python reports the error (clamped into the file)."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        want = (exc.lineno, exc.offset)
    [err] = gs001(text)
    lines = split_lines(text)
    line = min(want[0], len(lines))
    assert err.line == line and err.line == min(where[0], len(lines))
    assert err.column == max(1, min(want[1], len(lines[line - 1]) + 1))


def test_missing_block_is_reported_at_the_end_of_its_chunk():
    """Python reports a missing block at the next statement; the chunk alone, at the end of its header (the next
    statement is fine, and analysed)."""
    [err] = gs001("x = 1\nclass A:\ndef f():\n    pass\n")
    assert (err.line, err.column) == (2, 9) and "skipped line 2 " in err.message


def test_unsure_text_falls_back_to_the_prefix():
    """An f-string whose braces do not balance may read differently on Python 3.12+: the prefix is analysed."""
    text = "import torch\n\n\n" + INPLACE + "\n\nbad = f'{x\n\n\n" + INPLACE.replace("def g", "def g2")
    assert recover_chunks(text, split_lines(text), None) is None
    [err] = gs001(text)
    assert "only the code before line" in err.message


def test_broken_keystroke_does_not_parse_the_whole_file():
    text = ("import torch\n\n\n" + INPLACE + "\n\n" + INPLACE.replace("def g", "def g2")) * 3
    analyze_source(text, "stats.py")
    broken = text.replace("b.mul_(2)", "b.mul_(2", 1)
    for version in (broken, broken.replace("b.mul_(2", "b.mul_(3", 1), text):  # break, stay broken, fix
        before = dict(analysis.ENGINE.stats)
        warm = full(analyze_source(version, "stats.py"))
        stats = analysis.ENGINE.stats
        assert stats["parsed"] == before["parsed"] and stats["chunked"] == before["chunked"] + 1
        assert warm == cold(version, "stats.py")


# ---------------------------------------------------------------- the chunking invariant


def dump(tree) -> str:
    return ast.dump(tree, include_attributes=True)


def check_chunks(text: str) -> str:
    """Some chunk fails iff the text does not parse; when none fails, the chunks' statements are ast.parse's, and
    the parses derived from a parsed version are what parsing its chunks gives."""
    lines = split_lines(text)
    try:
        want = ast.parse(text)
    except SyntaxError:
        want = None
    except (ValueError, RecursionError, MemoryError):
        return "skip"
    got = recover_chunks(text, lines, None)
    if got is None:
        return "unsure"
    if want is None:
        assert got.failed, "every chunk parses, but the text does not"
        return "broken"
    assert not got.failed, f"a chunk fails, but the text parses: {got.failed}"
    assert dump(got.tree) == dump(want)
    derived = derived_parses(FileState(text, lines, want, {}))
    assert set(derived) == set(got.parsed)
    for chunk, (at, stmts) in derived.items():
        fresh = got.parsed[chunk]
        assert fresh[0] == at and [dump(s) for s in fresh[1]] == [dump(s) for s in stmts]
    return "parses"


AT_LINE_START = ["def ", "class ", "@", "@dec\n", "else:\n", "'''", '"""', "\\", "\\\n", "(", ")", "x = (\n",
                 "async def f():\n", "#", "    ", "if x:\n", "try:\n", "except:\n", "elif y:\n", "finally:\n",
                 "def g(:\n", "@torch.no_grad()\n", "class A(:\n", "]\n", "x = '''\n", "r'\\\n", "'a\\\n", "\x0c", "\r"]


@pytest.mark.parametrize("path", EXAMPLES + FIXTURES, ids=lambda p: p.name)
def test_chunks_fail_exactly_when_the_text_does_not_parse(path):
    text = path.read_text()
    rng = random.Random("chunks" + path.name)
    seen = {"parses": 0, "broken": 0}
    for _ in range(40):
        kind = rng.random()
        if kind < 0.4:
            new = mutate(text, rng)
        elif kind < 0.6:
            new = line_edit(text, rng)
        else:
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            col = 0 if rng.random() < 0.6 else rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:col] + rng.choice(AT_LINE_START) + lines[i][col:]
            new = "\n".join(lines)
        outcome = check_chunks(new)
        seen[outcome] = seen.get(outcome, 0) + 1
        if rng.random() < 0.5:
            text = new
    assert seen["broken"] or seen["parses"]


def test_chunks_of_special_cases():
    base = ("import torch\n\n\n@torch.no_grad()\ndef f(x):\n    return x * 2\n\n\nclass A:\n    a = 1; b = 2\n\n"
            "    def g(self):\n        s = '''multi\nline'''\n        return s\n\n\nx = 1; y = 2\nz = (1 +\n     2)\n"
            "w = 3 \\\n    + 4\nif x:\n    pass\nelse:\n    pass\nv = [\n1,\n2]\nu = f'{x!r:>{w}}' \\\n\n"
            "try:\n    pass\nexcept E:\n    pass\nfinally:\n    pass\nm = (torch.ones(2)\n@torch.ones(2))\n"
            "def k():\n    pass\n\\\n\nclass B: pass\n")
    assert check_chunks(base) == "parses"
    rng = random.Random(11)
    for variant in (base, base.replace("\n", "\r\n"), base.replace("\n", "\r")):
        for _ in range(150):
            check_chunks(mutate(variant, rng))


# ---------------------------------------------------------------- typing sessions, warm == cold


def typing(text: str, rng: random.Random, compare_every: int = 1):
    """Type a few lines character by character at two places (in a function body and at top level), then
    delete them again: every intermediate text, as the language server sees them."""
    lines = text.split("\n")
    defs = [i for i, line in enumerate(lines) if line.lstrip().startswith("def ") and line.rstrip().endswith(":")
            and i + 1 < len(lines) and lines[i + 1].strip()]
    top = [i for i, line in enumerate(lines) if line.startswith(("def ", "class ", "@"))]
    sites = []
    if defs:
        i = rng.choice(defs)
        indent = lines[i + 1][:len(lines[i + 1]) - len(lines[i + 1].lstrip())]
        sites.append((i + 1, indent, ["y = torch.sigmoid(x.detach(", "y.mul_(2)", "s = '''doc"]))
    if top:
        sites.append((rng.choice(top), "", ["def typed(a, b):", "    return torch.exp(a).add_(b"]))
    for pos, indent, typed_lines in sites:
        typed: list = []
        for line in typed_lines:
            typed.append(indent)
            yield "\n".join(lines[:pos] + typed + lines[pos:])
            for ch in line:
                typed[-1] += ch
                yield "\n".join(lines[:pos] + typed + lines[pos:])
        while typed:
            while typed[-1]:
                typed[-1] = typed[-1][:-1]
                yield "\n".join(lines[:pos] + typed + lines[pos:])
            typed.pop()
            yield "\n".join(lines[:pos] + typed + lines[pos:])


@pytest.mark.parametrize("path", EXAMPLES + SEEDS, ids=lambda p: p.name)
def test_typing_session_warm_equals_cold(path):
    text = path.read_text()
    analyze_source(text, str(path))
    rng = random.Random("typing" + path.name)
    for k, version in enumerate(typing(text, rng)):
        warm = full(analyze_source(version, str(path)))
        if k % 2 == 0 or any(f["code"] == "GS001" for f in warm[0]):
            assert warm == cold(version, str(path)), k


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_typing_session_warm_equals_cold(path):
    if not path.is_file():
        pytest.skip("bench corpus not fetched (bench/corpus.py)")
    text = path.read_text()
    analyze_source(text, str(path))
    rng = random.Random("typing" + path.name)
    versions = list(typing(text, rng))
    picks = set(rng.sample(range(len(versions)), min(10, len(versions))))
    for k, version in enumerate(versions):
        warm = full(analyze_source(version, str(path)))
        if k in picks:
            assert warm == cold(version, str(path)), k


@pytest.mark.parametrize("path", EXAMPLES[:3] + SEEDS[:3], ids=lambda p: p.name)
def test_random_broken_edits_warm_equals_cold(path):
    """Edits that break the text and edits made while it stays broken (elsewhere, or adding lines)."""
    text = path.read_text()
    rng = random.Random("broken" + path.name)
    analyze_source(text, str(path))
    for _ in range(12):
        text = mutate(text, rng) if rng.random() < 0.7 else line_edit(text, rng)
        warm = full(analyze_source(text, str(path)))
        assert warm == cold(text, str(path))


@pytest.mark.parametrize("path", EXAMPLES[:2] + SEEDS[:1], ids=lambda p: p.name)
def test_every_prefix_never_raises(path):
    text = path.read_text()
    n = len(text)
    step = 1 if n < 2500 else 3
    for k in range(0, n + 1, step):
        prefix = text[:k]
        a = analyze_source(prefix, str(path))
        lines = split_lines(prefix)
        for f in a.findings:
            assert 1 <= f.line <= f.end_line <= len(lines), (k, f)
        assert not [p for p in a.problems if "internal error" in p], (k, a.problems)


# ---------------------------------------------------------------- bracket typos at top level (issue 15 part 3)

TAIL = "import torch\nz = torch.randn(3, requires_grad=True)\nw = torch.sigmoid(z)\nw.mul_(2)\nw.sum().backward()\n"


@pytest.mark.parametrize("typo", ["print(y[)\n", "def oops(:\n    pass\n", "foo(\n", "x = {1: 2]\n", "y = a)\n",
                                  "call(a, [b, c)\n", "t = (1,\n  2,\n"])
def test_top_level_bracket_typo_loses_only_its_statement(typo):
    """A bracket closed by the wrong bracket, closed without an opening, or never closed makes the text invalid
    whatever follows: only the broken statement is skipped, the statements after it are analysed at their lines."""
    text = "import torch\n" + typo + TAIL
    with pytest.raises(SyntaxError):
        ast.parse(text)
    clean = "import torch\n" + "\n" * typo.count("\n") + TAIL
    want = [(c, line) for c, line in codes(clean, "clean.py") if line > 1 + typo.count("\n")]
    assert want, "the tail must hold a finding for the test to mean anything"
    got = codes(text)
    assert [c for c, _ in got].count("GS001") == 1, got
    [err] = gs001(text)
    assert 2 <= err.line <= err.end_line <= 1 + typo.count("\n")
    assert [x for x in got if x[0] != "GS001"] == want
    assert full(analyze_source(text, "typo.py")) == cold(text, "typo.py")


def test_a_bracket_closed_by_a_continuation_line_at_column_0_still_joins():
    """Valid text with a column-0 line inside brackets is never cut: only invalid text is cut at a typo."""
    valid = "x = foo(\na,\n)\n" + TAIL
    assert check_chunks(valid) == "parses"
    assert check_chunks("x = foo(\na]\n" + TAIL) == "broken"
    text = valid.replace(TAIL, "print(x[)\n" + TAIL)
    [err] = gs001(text)
    assert err.line == 4 and err.end_line == 4


@pytest.mark.parametrize("text", ["x = (", "if x:", "def f():\n", "x = '''abc\n", "x = 1\nfoo(\n", "@dec\n",
                                  "class A:\n    def f(self):\n", "x = [1,\n 2,\n", "x = 1 +\n", "print(y[)",
                                  "def oops(:", "f(a]\n\n\n", "try:\n    pass\n"])
def test_reported_ranges_stay_inside_the_file(text):
    for path in ("<stdin>", "ranges.py"):
        a = analyze_source(text, path)
        lines = split_lines(text)
        assert a.findings
        for f in a.findings:
            assert 1 <= f.line <= f.end_line <= len(lines), (text, f)
            assert f.end_column <= len(lines[f.end_line - 1]) + 1, (text, f)
