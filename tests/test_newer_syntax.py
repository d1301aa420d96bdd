"""Python 3.12 syntax on an older interpreter (`engine/newsyntax.py`): f-strings of PEP 701 and type parameters of
PEP 695 are valid Python, so they get an information note, not a syntax error, and the statements around them are
analysed. On Python 3.12+ the interpreter parses them itself and there is nothing to note."""

import json
import random
import subprocess
import sys

import pytest

from gradsight import analysis
from gradsight.analysis import analyze_source
from gradsight.config import Config, load_pyproject
from gradsight.engine.newsyntax import OLD_PYTHON, string_spans, downgrade
from gradsight.engine.report import split_lines
from test_syntax_recovery import cold, full, typing

old_only = pytest.mark.skipif(not OLD_PYTHON, reason="this Python parses 3.12 syntax itself")
new_only = pytest.mark.skipif(OLD_PYTHON, reason="this Python does not parse 3.12 syntax")

# A training function whose log line uses PEP 701 (the dict key in the same quotes, a backslash in a field); the
# bug two lines below (`out.numpy()` on a tensor that requires grad) raises under torch whatever the Python.
TRAIN = '''import torch
import torch.nn as nn


def train(model, loader, opt, cfg):
    model.train()
    for step, (x, y) in enumerate(loader):
        out = model(x)
        loss = nn.functional.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss={loss.item():.4f} lr={cfg["lr"]} {"\\n".join(["a", "b"])}")
        print(f"pred {out.numpy()}")


net = nn.Linear(3, 1)
train(net, [(torch.randn(4, 3), torch.randn(4, 1))], torch.optim.SGD(net.parameters(), lr=0.1), {"lr": 0.1})
'''

GENERIC = '''import torch


def first[T](xs: list[T]) -> T:
    return xs[0]


class Box[T: (int, float), *Ts]:
    def get(self) -> T:
        return self.v


type Pair[K] = tuple[K,
                     K]
x = torch.ones(2, requires_grad=True)
y = x.numpy()
'''


def findings(text: str, path: str = "newer.py"):
    analysis.ENGINE.forget(path)
    return [(f.code, f.line, f.column, f.severity.value) for f in analyze_source(text, path).findings]


@old_only
def test_pep701_fstring_is_a_note_and_the_function_is_analysed():
    got = findings(TRAIN)
    assert ("GS001", 13, 15, "information") in got
    assert ("GS201", 14, 23, "error") in got
    assert not [f for f in got if f[0] == "GS001" and f[3] != "information"]


@old_only
def test_pep695_definitions_and_type_statement():
    got = findings(GENERIC)
    assert [f for f in got if f[0] == "GS001"] == [("GS001", 4, 10, "information"), ("GS001", 8, 10, "information"),
                                                 ("GS001", 13, 1, "information")]
    assert ("GS201", 16, 5, "error") in got


@new_only
def test_newer_python_parses_it_without_notes():
    assert not [f for f in findings(TRAIN) + findings(GENERIC) if f[0] == "GS001"]
    assert ("GS201", 14, 23, "error") in findings(TRAIN)


@pytest.mark.parametrize("text", [
    'x = f"{d"\n',  # a field that never closes
    'x = f"{1 +}"\n',  # no expression
    'x = f"{lambda v: v}"\n',  # a lambda needs parentheses in 3.12 too
    'print "x"\n',  # Python 2
    'def f[1](x):\n    pass\n',  # not type parameters
    'type = 3 +\n',  # an assignment to `type`, broken
])
def test_invalid_everywhere_stays_a_syntax_error(text):
    got = [f for f in findings(text) if f[0] == "GS001"]
    assert got and all(f[3] == "error" for f in got), got


def test_a_name_called_type_is_not_a_type_statement():
    assert findings("type = 3\nprint(type)\n") == []


@old_only
@pytest.mark.parametrize("text", [TRAIN, GENERIC, 'x = f"{"é"} ° {d["ü"]}"; y = 1\n',
                                  'v = (f"{a\n + b}"  # a field across lines\n     )\n'])
def test_rewrite_keeps_every_line_length_and_byte_length(text):
    lines = split_lines(text)
    down = downgrade(lines, [(1, len(lines), "f-string: x", 1)])
    assert down is not None
    new, notes = down
    assert notes
    assert [len(a) for a in new] == [len(a) for a in lines]
    assert [len(a.encode()) for a in new] == [len(a.encode()) for a in lines]
    compile("\n".join(new), "x.py", "exec")  # this Python parses the rewrite


def test_strings_read_as_python_312_reads_them():
    text = ('a = f"{d["k"]:{w}.{p}}" + "#no" # comment "x"\n'
            "b = f'{x!r:>{n}} {y != z} {({1: 2})[1]} {f\"{q}\"}' + rb'\\'' + f\"\\N{DASH}{{lit}}\"\n")
    got = [(text[s:e], is_f) for s, e, is_f in string_spans(text)]
    assert got == [('f"{d["k"]:{w}.{p}}"', True), ('"#no"', False),
                   ("f'{x!r:>{n}} {y != z} {({1: 2})[1]} {f\"{q}\"}'", True), ("rb'\\''", False),
                   ('f"\\N{DASH}{{lit}}"', True)]


def test_ordinary_syntax_errors_skip_the_rewrite():
    # An error whose message and line say nothing of f-strings or type parameters: not looked at.
    lines = split_lines('x = f"{d["k"]}"\ny = (1,\n')
    assert downgrade(lines, [(2, 2, "'(' was never closed", 2)]) is None


@old_only
def test_typing_in_a_312_file_warm_equals_cold():
    path = "typed312.py"
    analysis.ENGINE.forget(path)
    analyze_source(TRAIN, path)
    rng = random.Random("newer")
    for k, version in enumerate(typing(TRAIN, rng)):
        warm = full(analyze_source(version, path))
        if k % 3 == 0:
            assert warm == cold(version, path), k
    # Typing a PEP 701 f-string into an ordinary file, character by character.
    base = TRAIN.replace('        print(f"step {step}: loss={loss.item():.4f} lr={cfg["lr"]} {"\\n".join(["a", "b"])}")\n',
                         "")
    analysis.ENGINE.forget(path)
    analyze_source(base, path)
    line = '        print(f"lr={cfg["lr"]}")\n'
    at = base.index("        print(f\"pred")
    for n in range(len(line) + 1):
        version = base[:at] + line[:n] + base[at:]
        warm = full(analyze_source(version, path))
        assert warm == cold(version, path), n
    assert ("GS001", 13, 15, "information") in [(f["code"], f["line"], f["column"], f["severity"]) for f in warm[0]]


@pytest.mark.parametrize("toml,oldest", [
    ('[project]\nrequires-python = ">=3.10, <4"\n', (3, 10)),
    ('[project]\nrequires-python = "~=3.11"\n', (3, 11)),
    ('[project]\nrequires-python = "==3.12.*"\n', (3, 12)),
    ('[project]\nrequires-python = "<3.13"\n', None),
    ('[tool.poetry.dependencies]\npython = "^3.9"\n', (3, 9)),
    ('[project]\nname = "x"\n', None),
    ('[project]\nrequires-python = 3\n', None),
])
def test_requires_python_is_read_from_pyproject(tmp_path, toml, oldest):
    (tmp_path / "pyproject.toml").write_text(toml + "[tool.gradsight]\nignore = [\"GS205\"]\n")
    config, problems = load_pyproject(tmp_path / "pyproject.toml")
    assert problems == []
    assert config.requires_python == oldest
    assert config.ignore == ("GS205",)
    (tmp_path / "pyproject.toml").write_text(toml)  # no [tool.gradsight] table: still read
    assert load_pyproject(tmp_path / "pyproject.toml")[0].requires_python == oldest


@old_only
def test_a_project_that_supports_python_311_gets_an_error():
    for oldest, severity in (((3, 10), "error"), ((3, 12), "information"), (None, "information")):
        analysis.ENGINE.forget("newer.py")
        got = analyze_source(TRAIN, "newer.py", Config(requires_python=oldest)).findings
        note = next(f for f in got if f.code == "GS001")
        assert (note.line, note.severity.value) == (13, severity)
        assert ("requires-python" in note.message) == (severity == "error")
        assert any(f.code == "GS201" and f.line == 14 for f in got)


@old_only
def test_a_sibling_module_in_312_syntax_is_still_read(tmp_path):
    """`from net import Net` where net.py uses type parameters: the model is still known in train.py."""
    (tmp_path / "net.py").write_text(
        "import torch.nn as nn\n\n\nclass Net[T](nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(3, 1)\n\n    def forward(self, x):\n        return self.fc(x)\n")
    (tmp_path / "train.py").write_text("import torch\nfrom net import Net\n\nmodel = Net()\n"
                                       "pred = model(torch.randn(4, 3))\nprint(pred.numpy())\n")
    proc = subprocess.run([sys.executable, "-m", "gradsight", "check", "--output-format", "json", "--no-cache",
                           "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    got = [(f["code"], f["line"]) for f in json.loads(proc.stdout)]
    assert ("GS201", 6) in got, proc.stdout + proc.stderr
