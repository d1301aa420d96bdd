"""The incremental parse (re-parsing only the edited top-level statement) must give exactly `ast.parse`'s tree,
and an analysis after an edit exactly what a cold analysis of the same text gives."""

import ast
import pathlib
import random

import pytest

from gradsight.analysis import analyze_source
from gradsight.analysis import RULES
from gradsight.engine.engine import Engine
from gradsight.engine.incremental import FileState, reparse
from gradsight.engine.report import split_lines

# Mutated text may hold invalid escape sequences: the parser warns, on both paths alike.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "docs" / "examples").glob("*.py")) + sorted((ROOT / "tests" / "fixtures").rglob("*.py"))[:40]
CORPUS = ROOT / "bench" / ".corpus"
CORPUS_FILES = [CORPUS / p for p in ("timm/timm/models/vision_transformer.py", "torch/nn/modules/module.py",
                                     "transformers/src/transformers/models/llama/modeling_llama.py")]

SNIPPETS = ["(", ")", "'", '"""', "\\", ":", "@", "#", " ", "\t", "x", "1", "; y = 2", "[", "]", "lambda", "if",
            "def", "else:", "yield", "await ", "\x0c", "é", "\r"]


def mutate(text: str, rng: random.Random) -> str:
    """One editor-like change; most keep the number of lines (the case the incremental parse handles)."""
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    line = lines[i]
    kind = rng.randrange(10)
    col = rng.randrange(len(line) + 1)
    if kind <= 3:  # insert a snippet
        lines[i] = line[:col] + rng.choice(SNIPPETS) + line[col:]
    elif kind == 4 and line:  # delete a character
        lines[i] = line[:col] + line[col + 1:]
    elif kind == 5:  # indent or dedent
        lines[i] = ("    " + line) if rng.random() < 0.5 else line.lstrip()
    elif kind == 6:  # comment out / blank the line
        lines[i] = "# " + line if rng.random() < 0.5 else ""
    elif kind == 7:  # swap with the next line
        if i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif kind == 8:  # change two distant lines at once
        j = rng.randrange(len(lines))
        lines[i] = line + " "
        lines[j] = lines[j].replace("(", "( ", 1)
    else:  # insert or delete a line (not incremental: must fall back)
        if rng.random() < 0.5:
            lines.insert(i, line)
        else:
            del lines[i]
    return "\n".join(lines)


def dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def check_parses(text: str, rng: random.Random, n: int) -> int:
    """Mutate `text` n times (cumulatively, like typing); the spliced tree must equal ast.parse's. Returns how
    many edits were handled incrementally."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return 0
    state = FileState(text, split_lines(text), tree, {})
    spliced = 0
    for _ in range(n):
        new = mutate(text, rng)
        got = reparse(state, new, split_lines(new))
        try:
            want = ast.parse(new)
        except (SyntaxError, ValueError):
            assert got is None, "the incremental parse accepted text that does not parse"
            continue
        if got is not None:
            spliced += 1
            assert dump(got) == dump(want)
        text = new
        state = FileState(text, split_lines(text), want, {})
    return spliced


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_spliced_tree_equals_full_parse(path):
    text = path.read_text()
    if not text.strip():
        pytest.skip("empty file")
    check_parses(text, random.Random(path.name), 60)


def test_line_endings_and_special_cases():
    rng = random.Random(7)
    base = ("import torch\n\n\n@torch.no_grad()\ndef f(x):\n    return x * 2\n\n\nclass A:\n    a = 1; b = 2\n\n"
            "    def g(self):\n        s = '''multi\nline'''\n        return s\n\n\nx = 1; y = 2\nz = (1 +\n     2)\n"
            "w = 3 \\\n    + 4\nif x:\n    pass\nelse:\n    pass\n")
    for variant in (base, base.replace("\n", "\r\n"), base.replace("\n", "\r")):
        check_parses(variant, rng, 200)


def test_most_edits_are_incremental():
    text = (ROOT / "docs" / "examples").glob("*.py")
    total = spliced = 0
    rng = random.Random(3)
    for path in sorted(text):
        src = path.read_text()
        tree = ast.parse(src)
        state = FileState(src, split_lines(src), tree, {})
        lines = src.split("\n")
        for _ in range(20):
            i = rng.randrange(len(lines))
            edited = list(lines)
            edited[i] = edited[i] + " "  # a trailing space always parses
            new = "\n".join(edited)
            total += 1
            spliced += reparse(state, new, split_lines(new)) is not None
    assert spliced >= 0.9 * total, f"{spliced}/{total}"


def snapshot(a):
    return ([f.to_json() for f in a.findings],
            [(f.line, f.column, f.end_line, f.end_column, f.name, f.summary, f.label, f.chain, f.transition)
             for f in a.facts], a.problems, sorted(a.dependencies.items()))


def cold(text: str, path: str):
    return snapshot(Engine().analyze(text, path, rules=RULES))  # a fresh engine: every cache empty


@pytest.mark.parametrize("path", sorted((ROOT / "docs" / "examples").glob("*.py"))
                         + sorted((ROOT / "tests" / "fixtures" / "seed_cases").glob("*.py")), ids=lambda p: p.name)
def test_typing_session_warm_equals_cold(path):
    """A sequence of edits, each analysed warm (after the previous version) and cold."""
    text = path.read_text()
    rng = random.Random("typing" + path.name)
    analyze_source(text, str(path))
    for _ in range(8):
        text = mutate(text, rng)
        warm = snapshot(analyze_source(text, str(path)))
        assert warm == cold(text, str(path))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_edits(path):
    if not path.is_file():
        pytest.skip("bench corpus not fetched (bench/corpus.py)")
    text = path.read_text()
    rng = random.Random(path.name)
    assert check_parses(text, rng, 25) > 0
    analyze_source(text, str(path))
    lines = text.split("\n")
    for k in range(3):  # one-character edits in a method body, warm vs cold
        i = next(n for n in range(rng.randrange(len(lines) // 2), len(lines)) if lines[n].startswith("        "))
        edited = list(lines)
        edited[i] = edited[i] + " " * (k + 1)
        new = "\n".join(edited)
        assert snapshot(analyze_source(new, str(path))) == cold(new, str(path))


def line_edit(text: str, rng: random.Random) -> str:
    """An edit that changes the number of lines: Enter (splitting a line, or a new indented line), Backspace at
    a line start (joining two lines), pasting several lines, deleting a block."""
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    line = lines[i]
    kind = rng.randrange(5)
    if kind == 0:  # Enter inside a line
        col = rng.randrange(len(line) + 1)
        lines[i:i + 1] = [line[:col], " " * (len(line) - len(line.lstrip())) + line[col:]]
    elif kind == 1:  # Enter at the end of a line: a new (indented) empty line
        lines.insert(i + 1, " " * (len(line) - len(line.lstrip())))
    elif kind == 2 and i > 0:  # Backspace at the start of a line
        lines[i - 1:i + 1] = [lines[i - 1] + line]
    elif kind == 3:  # paste a few lines from elsewhere in the file
        j = rng.randrange(len(lines))
        lines[i:i] = lines[j:j + rng.randrange(1, 6)]
    else:  # delete a block
        del lines[i:i + rng.randrange(1, 6)]
    return "\n".join(lines)


def check_line_edits(text: str, rng: random.Random, n: int) -> tuple:
    """Like `check_parses`, with edits that add or remove lines. Returns (spliced, parsable edits)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return 0, 0
    state = FileState(text, split_lines(text), tree, {})
    spliced = ok = 0
    for _ in range(n):
        new = line_edit(text, rng)
        got = reparse(state, new, split_lines(new))
        try:
            want = ast.parse(new)
        except (SyntaxError, ValueError):
            assert got is None, "the incremental parse accepted text that does not parse"
            continue
        ok += 1
        if got is not None:
            spliced += 1
            assert dump(got) == dump(want)
        text = new
        state = FileState(text, split_lines(text), want, {})
    return spliced, ok


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_line_count_edits_splice_exactly(path):
    text = path.read_text()
    if not text.strip():
        pytest.skip("empty file")
    check_line_edits(text, random.Random("lines" + path.name), 40)


def test_line_count_edits_are_mostly_incremental():
    spliced = total = 0
    for path in sorted((ROOT / "docs" / "examples").glob("*.py")):
        src = path.read_text()
        s, ok = check_line_edits(src, random.Random("mostly" + path.name), 20)
        spliced, total = spliced + s, total + ok
    assert total and spliced >= 0.8 * total, f"{spliced}/{total}"


@pytest.mark.parametrize("path", sorted((ROOT / "docs" / "examples").glob("*.py"))
                         + sorted((ROOT / "tests" / "fixtures" / "seed_cases").glob("*.py")), ids=lambda p: p.name)
def test_line_count_typing_session_warm_equals_cold(path):
    """Enter, Backspace, paste and delete, each analysed warm (after the previous version) and cold."""
    text = path.read_text()
    rng = random.Random("enter" + path.name)
    analyze_source(text, str(path))
    for _ in range(10):
        text = line_edit(text, rng)
        warm = snapshot(analyze_source(text, str(path)))
        assert warm == cold(text, str(path))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_line_count_edits(path):
    if not path.is_file():
        pytest.skip("bench corpus not fetched (bench/corpus.py)")
    text = path.read_text()
    rng = random.Random("lines" + path.name)
    spliced, ok = check_line_edits(text, rng, 15)
    assert spliced >= 0.8 * ok
    analyze_source(text, str(path))
    for _ in range(3):
        text = line_edit(text, rng)
        assert snapshot(analyze_source(text, str(path))) == cold(text, str(path))
