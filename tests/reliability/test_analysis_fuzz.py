"""Fuzzing `analyze_source`: it never raises, never hangs, and every position it returns is valid.

Inputs: the real PyTorch corpus (docs/examples, the seed cases, torch/nn/modules, torch/optim), mutants
of it, every prefix of some files (typing character by character), hypothesmith's grammar- and
CST-based programs, and a fast generator of torch-flavoured programs. The CI-sized run takes about half
a minute; GRADSIGHT_FUZZ_SCALE multiplies it, and scripts/fuzz_campaign.py runs the long campaign.

Hang bound: max(5 s, 20 x (0.05 s + 2 ms per line)) wall clock, enforced with SIGALRM. The budget itself
(0.05 s + 2 ms per line) is measured and reported by the campaign, not asserted here: a shared CI
machine is too noisy for that.
"""

from __future__ import annotations

import random
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gs_fuzz as g
from gs_fuzz import scale
from gradsight.analysis import analyze_source
from gradsight.findings import Edit, Finding, Fix, Applicability, Severity
from gradsight.fixes import apply_fixes

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")

CORPUS = g.corpus_files()
SMALL = [p for p in CORPUS if g.line_count(g.read(p)) <= 1500]


def fail_with(failure: g.Failure, what: str) -> None:
    """Minimise (briefly) and report a failure with a copy-pasteable reproduction."""
    deadline = time.monotonic() + 20
    sig = g.signature(failure)
    check = g.same_failure(sig)
    small = g.minimize(failure.text, lambda t: time.monotonic() < deadline and check(t)) \
        if failure.kind != "hang" else failure.text[:2000]
    pytest.fail(f"{what}: {failure.kind}\n{failure.detail[-3000:]}\n\nminimal input:\nanalyze_source({small!r})",
                pytrace=False)


@pytest.fixture(scope="module", autouse=True)
def warm():
    warnings.simplefilter("ignore", SyntaxWarning)
    analyze_source("import torch\nx = torch.ones(1, requires_grad=True)\n")  # imports and tables, once


# ---------------------------------------------------------------- the checker itself


def test_range_checker_rejects_bad_positions():
    text = "ab\ncd\n"

    class A:
        path = "t.py"
        facts = []
        problems = []

        def __init__(self, findings):
            self.findings = findings

    def finding(line, col, end_line, end_col, fix=None):
        return Finding("t.py", line, col, end_line, end_col, "GS000", "x", Severity.ERROR, "m", (), fix)

    assert g.range_problems(text, A([finding(1, 1, 1, 3), finding(3, 1, 3, 1)])) == []
    assert g.range_problems(text, A([finding(4, 1, 4, 1)]))  # past the last line
    assert g.range_problems(text, A([finding(1, 4, 1, 4)]))  # past the end of the line
    assert g.range_problems(text, A([finding(2, 2, 1, 1)]))  # end before start
    assert g.range_problems(text, A([finding(0, 1, 1, 1)]))
    bad_fix = Fix("f", Applicability.SAFE, (Edit(1, 1, 9, 1, "x"),))
    assert g.range_problems(text, A([finding(1, 1, 1, 1, bad_fix)]))
    # "\f" is not a line end for Python or LSP: one line, four columns.
    assert g.range_problems("a\fb\n", A([finding(1, 4, 1, 4)])) == []
    assert g.range_problems("a\fb\n", A([finding(2, 1, 2, 1)])) == []  # the empty line after "\n"
    assert g.range_problems("a\fb\n", A([finding(3, 1, 3, 1)]))


# ---------------------------------------------------------------- real code


def test_corpus_analyses_cleanly():
    assert len(CORPUS) > 20, "the corpus should include torch/nn/modules and torch/optim"
    slowest = (0.0, "")
    for path in CORPUS:
        text = g.read(path)
        result = g.run_checked(text, str(path), cold=True)
        if result.failure:
            fail_with(result.failure, str(path))
        slowest = max(slowest, (result.cpu / g.budget_s(text), path.name))
    print(f"corpus: {len(CORPUS)} files, worst CPU/budget {slowest[0]:.2f} ({slowest[1]})")


def test_mutants_of_real_code():
    rng = random.Random(20261122)
    texts = [(p.name, g.read(p)) for p in SMALL]
    n = int(500 * scale())
    deadline = time.monotonic() + 12 * scale()
    done = 0
    for i in range(n):
        name, text = rng.choice(texts)
        mutant = g.mutate(text, rng)
        result = g.run_checked(mutant, "mutant.py", cold=i % 2 == 0)
        if result.failure:
            fail_with(result.failure, f"mutant #{i} of {name}")
        _fixes_apply(mutant, result.analysis)
        done += 1
        if time.monotonic() > deadline:
            break
    assert done >= min(n, 50)
    print(f"mutants: {done}")


def _fixes_apply(text: str, analysis) -> None:
    """Applying every fix (safe and unsafe) gives text that analyses cleanly too."""
    if not any(f.fix for f in analysis.findings):
        return
    fixed, _ = apply_fixes(text, analysis.findings, unsafe=True)
    assert isinstance(fixed, str)
    result = g.run_checked(fixed, "fixed.py")
    if result.failure:
        fail_with(result.failure, "text after applying fixes")


def test_incremental_reanalysis_equals_cold():
    """Edits as typed in an editor, each analysed warm (after the previous version) and cold: same result."""
    rng = random.Random(4242)
    texts = [(p.name, g.read(p)) for p in SMALL if g.line_count(g.read(p)) <= 400]
    small_edits = [g.m_delete, g.m_insert, g.m_swap_lines, g.m_dup_line, g.m_delete_lines, g.m_reindent,
                   g.m_insert_copy, g.m_unicode_names]
    deadline = time.monotonic() + 10 * scale()
    steps = 0
    while steps < int(200 * scale()) and time.monotonic() < deadline:
        name, text = rng.choice(texts)
        for _ in range(5):
            edited = rng.choice(small_edits)(text, rng)
            problem = g.incremental_mismatch(text, edited, "edited.py")
            steps += 1
            if problem:
                pytest.fail(f"warm and cold analyses differ after an edit of {name}: {problem}\n"
                            f"before = {text!r}\nafter = {edited!r}", pytrace=False)
            text = edited
    print(f"incremental: {steps} edits")


@pytest.mark.parametrize("name, step", [("clean_training.py", 1), ("gan_step.py", 2), ("rnn_language_model.py", 3),
                                        ("extra_rnn_hidden_carry.py", 2), ("seed002_ex2.py", 5)])
def test_every_prefix_while_typing(name, step):
    path = next(p for p in CORPUS if p.name == name)
    text = g.read(path)
    for prefix in g.prefixes(text, max(1, int(step / scale()))):
        result = g.run_checked(prefix, "typing.py")
        if result.failure:
            fail_with(result.failure, f"prefix of {name} ({len(prefix)} characters)")


def test_typing_with_crlf_and_unicode():
    # The same, with Windows line endings, tabs and non-ASCII identifiers, strings and comments.
    text = g.read(next(p for p in CORPUS if p.name == "gan_step.py"))
    text = text.replace("fake", "fäke_日本").replace("    ", "\t").replace("# ", "# 😀 e\u0301 ").replace("\n", "\r\n")
    for prefix in g.prefixes(text, max(1, int(4 / scale()))):
        result = g.run_checked(prefix, "typing.py")
        if result.failure:
            fail_with(result.failure, f"prefix ({len(prefix)} characters)")


# ---------------------------------------------------------------- generated programs

try:
    import hypothesmith
except ImportError:  # pragma: no cover
    hypothesmith = None

needs_hypothesmith = pytest.mark.skipif(hypothesmith is None, reason="hypothesmith is not installed")
# hypothesmith's generators are slow (0.5-3 s a program): few examples in CI, more with GRADSIGHT_FUZZ_SCALE.
SLOW_GEN = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)


def _check_generated(src: str) -> None:
    result = g.run_checked(src, "generated.py")
    if result.failure:
        fail_with(result.failure, "generated program")


@needs_hypothesmith
@settings(max_examples=max(1, int(6 * scale())), **SLOW_GEN)
@given(src=hypothesmith.from_node() if hypothesmith else st.just(""))
def test_hypothesmith_cst_programs(src):
    _check_generated(src)


@needs_hypothesmith
@settings(max_examples=max(1, int(3 * scale())), **SLOW_GEN)
@given(src=hypothesmith.from_grammar() if hypothesmith else st.just(""))
def test_hypothesmith_grammar_programs(src):
    _check_generated(src)


NAMES = ["x", "y", "w", "h", "loss", "out", "z", "名前", "é", "δ"]
METHODS = [".detach()", ".numpy()", ".sum()", ".mean()", ".add_(1)", ".mul(2)", ".clone()", ".item()",
           ".requires_grad_()", ".t()", ".exp()", ".sigmoid_()", "[0]", ".view(-1)", ".data", ".grad", ".cpu()",
           ".to('cpu')", ".relu()", ".zero_()", ".backward()", ".backward(retain_graph=True)", ".tolist()",
           ".detach_()", ".copy_(x)", ".fill_(0)", ".grad.zero_()", ".register_hook(print)"]
CALLS = ["torch.sigmoid({})", "F.relu({}, inplace=True)", "model({})", "np.array({})", "torch.cat([{0}, {0}])",
         "{}.new_zeros(3)", "float({})", "torch.stack([{}])", "nn.Parameter({})", "torch.tensor({})",
         "torch.no_grad()({})", "list({})", "lambda: {}", "(yield {})", "{} if x else y", "[{} for _ in range(2)]"]
CREATE = ["torch.randn(3, requires_grad=True)", "torch.zeros(2)", "torch.ones(2, 2, requires_grad=True)",
          "nn.Linear(2, 2)", "torch.optim.SGD(model.parameters(), lr=0.1)", "torch.tensor([1.0])", "None", "0", "'😀'"]


@st.composite
def expr(draw, depth=0):
    kind = draw(st.integers(0, 4 if depth < 3 else 1))
    if kind == 0:
        return draw(st.sampled_from(CREATE))
    if kind == 1:
        return draw(st.sampled_from(NAMES)) + "".join(draw(st.lists(st.sampled_from(METHODS), max_size=3)))
    if kind == 2:
        return draw(st.sampled_from(CALLS)).format(draw(expr(depth + 1)))
    if kind == 3:
        op = draw(st.sampled_from(["+", "*", "-", "@", "/", "**", "and", "<"]))
        return f"{draw(expr(depth + 1))} {op} {draw(expr(depth + 1))}"
    return f"({draw(expr(depth + 1))})"


@st.composite
def block(draw, depth=0):
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.integers(0, 9 if depth < 3 else 4))
        name = draw(st.sampled_from(NAMES))
        if kind <= 1:
            lines.append([f"{name} = {draw(expr())}"])
        elif kind == 2:
            lines.append([f"{name} {draw(st.sampled_from(['+=', '-=', '*=']))} {draw(expr())}"])
        elif kind == 3:
            lines.append([draw(expr())])
        elif kind == 4:
            lines.append([draw(st.sampled_from(["opt.zero_grad()", "opt.step()", "loss.backward()", f"del {name}",
                                                "pass", "return x", "break", "continue", "global x"]))])
        else:
            header = draw(st.sampled_from([
                "with torch.no_grad():", "with torch.enable_grad():", "for i in range(3):", "if x.sum() > 0:",
                "while k:", "try:", "def f(x, y=None):", "async def g(x):", "class M(nn.Module):",
                "def forward(self, x):", "else:", "except Exception:", "with torch.autograd.set_grad_enabled(False):",
                "match x:", "case _:", "@torch.no_grad()\ndef h(x):", "lambda x: (", "if True:"]))
            lines.append([header, *(["    " + ln for ln in sum(draw(block(depth + 1)), [])])])
    return lines


PRELUDE = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport numpy as np\n"


@st.composite
def torch_program(draw):
    body = "\n".join(sum(draw(block()), []))
    src = PRELUDE + body + "\n"
    if draw(st.booleans()):
        src = src.replace("    ", draw(st.sampled_from(["\t", "  ", "        "])))
    newline = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    src = src.replace("\n", newline)
    if draw(st.integers(0, 4)) == 0:  # a half-typed tail
        src = src[: draw(st.integers(0, len(src)))]
    return src


@settings(max_examples=int(100 * scale()), deadline=None, suppress_health_check=list(HealthCheck))
@given(src=torch_program())
def test_torch_flavoured_programs(src):
    _check_generated(src)


@settings(max_examples=int(60 * scale()), deadline=None, suppress_health_check=list(HealthCheck))
@given(src=st.lists(st.sampled_from(list("()[]{}:;,.=+-*@'\"#\\ \t\n\rxyz0_") + g.NOISE), max_size=60).map("".join))
def test_punctuation_soup(src):
    _check_generated(src)
