"""Shared machinery for gradsight's reliability tests and `scripts/fuzz_campaign.py`.

- `range_problems(text, analysis)`: every way an `Analysis` points outside `text` (empty list: all valid);
- `run_checked(text)`: analyse with a time budget and the range check; returns a `Failure` or None;
- `corpus_files()`: real PyTorch sources (installed torch, docs/examples, seed cases);
- `MUTATORS` / `mutate(text, rng)`: random deletions, insertions, truncations, swapped and duplicated
  lines, bracket noise, unicode noise, line-ending changes;
- `minimize(text, still_fails)`: a greedy line- then character-level reducer for reports.

Positions follow gradsight's contract (findings.py): 1-based lines, 1-based code-point columns. Lines
end at "\\r\\n", "\\r" or "\\n" (Python's tokenizer and LSP agree on these; "\\f", "\\v", U+2028 and
friends do *not* end a line, unlike `str.splitlines`). A text ending in a newline has an empty last
line, which is a valid place for a position (column 1).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import pathlib
import random
import re
import signal
import threading
import time
import traceback
from typing import Callable, Iterable, Optional

ROOT = pathlib.Path(__file__).resolve().parents[2]

from gradsight.analysis import analyze_source  # noqa: E402

_LINE_END = re.compile(r"\r\n|\r|\n")

# Time bound used to call something a hang: the documented per-file budget is
# 0.05 s + 2 ms per line; tests allow HANG_FACTOR times that (a shared 2-core CI box is noisy).
BASE_S = 0.05
PER_LINE_S = 0.002
HANG_FACTOR = 20


def scale() -> float:
    """GRADSIGHT_FUZZ_SCALE (default 1): multiplies the examples, mutants and messages of randomised tests."""
    try:
        return max(0.1, float(os.environ.get("GRADSIGHT_FUZZ_SCALE", "1")))
    except ValueError:
        return 1.0


def budget_s(text: str, factor: float = 1.0) -> float:
    return (BASE_S + PER_LINE_S * line_count(text)) * factor


def split_lines(text: str) -> list[str]:
    """The lines of `text` as Python and LSP count them (without terminators)."""
    return _LINE_END.split(text)


def line_count(text: str) -> int:
    return len(split_lines(text))


def _check_pos(what: str, lines: list[str], line, column, problems: list[str]) -> bool:
    if not isinstance(line, int) or not isinstance(column, int) or isinstance(line, bool) or isinstance(column, bool):
        problems.append(f"{what}: position ({line!r}, {column!r}) is not a pair of ints")
        return False
    if not 1 <= line <= len(lines):
        problems.append(f"{what}: line {line} outside 1..{len(lines)}")
        return False
    width = len(lines[line - 1])
    if not 1 <= column <= width + 1:
        problems.append(f"{what}: column {column} outside 1..{width + 1} on line {line} ({lines[line - 1][:80]!r})")
        return False
    return True


def _check_range(what: str, lines: list[str], line, column, end_line, end_column, problems: list[str]) -> None:
    ok = _check_pos(what + " start", lines, line, column, problems)
    ok = _check_pos(what + " end", lines, end_line, end_column, problems) and ok
    if ok and (end_line, end_column) < (line, column):
        problems.append(f"{what}: end ({end_line}, {end_column}) before start ({line}, {column})")


def range_problems(text: str, analysis, path: Optional[str] = None) -> list[str]:
    """Every finding, fix edit, related location and fact must point into `text`."""
    lines = split_lines(text)
    problems: list[str] = []
    path = path if path is not None else analysis.path
    for i, f in enumerate(analysis.findings):
        tag = f"finding #{i} {getattr(f, 'code', '?')}"
        _check_range(tag, lines, f.line, f.column, f.end_line, f.end_column, problems)
        if f.fix is not None:
            for j, e in enumerate(f.fix.edits):
                _check_range(f"{tag} fix edit #{j}", lines, e.line, e.column, e.end_line, e.end_column, problems)
                if not isinstance(e.new_text, str):
                    problems.append(f"{tag} fix edit #{j}: new_text is {type(e.new_text).__name__}")
            if f.fix.edits:
                ordered = sorted(f.fix.edits, key=lambda e: (e.line, e.column, e.end_line, e.end_column))
                for a, b in zip(ordered, ordered[1:]):
                    if (b.line, b.column) < (a.end_line, a.end_column):
                        problems.append(f"{tag}: fix edits overlap ({a} / {b})")
        for j, r in enumerate(f.related):
            if r.path == path:
                _check_pos(f"{tag} related #{j}", lines, r.line, r.column, problems)
    for i, fact in enumerate(analysis.facts):
        _check_range(f"fact #{i} {fact.name[:30]!r}", lines, fact.line, fact.column, fact.end_line,
                     fact.end_column, problems)
        for j, (line, _) in enumerate(fact.chain):
            if not (isinstance(line, int) and 1 <= line <= len(lines)):
                problems.append(f"fact #{i} chain #{j}: line {line} outside 1..{len(lines)}")
    for p in analysis.problems:
        if not isinstance(p, str):
            problems.append(f"problem {p!r} is not a string")
    return problems


@dataclasses.dataclass
class Failure:
    kind: str  # "crash" | "hang" | "range" | "slow"
    detail: str
    text: str
    seconds: float = 0.0

    def summary(self) -> str:
        return f"{self.kind}: {self.detail.splitlines()[-1] if self.detail else ''} ({self.seconds:.2f}s)"


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover - only on a hang
    raise _Timeout()


@dataclasses.dataclass
class Checked:
    failure: Optional[Failure]
    wall: float  # seconds, wall clock
    cpu: float  # seconds of this process's CPU (robust to a busy machine)
    analysis: object = None


def run_checked(text: str, path: str = "fuzz.py", hang_factor: float = HANG_FACTOR, min_hang_s: float = 5.0,
                slow_factor: Optional[float] = None, cold: bool = False) -> Checked:
    """Analyse `text` and check it: no exception, no hang, every position valid.

    A hang is an analysis that takes longer than max(min_hang_s, hang_factor * budget) of wall-clock time;
    it is interrupted with SIGALRM where available (main thread, POSIX). `slow_factor`, when given, reports
    "slow" for an analysis whose CPU time is over slow_factor * budget (the campaign uses it to measure;
    CI tests never do, a shared machine is too noisy for that). `cold` empties gradsight's in-process
    caches first, so that the whole file is analysed (and timed), not only what changed since last time.
    """
    if cold:
        from gradsight.analysis import ENGINE

        ENGINE.clear()
    limit = max(min_hang_s, budget_s(text, hang_factor))
    use_alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    old = None
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    start, cpu0 = time.perf_counter(), time.process_time()
    analysis = None
    failure = None
    try:
        analysis = analyze_source(text, path)
    except _Timeout:
        failure = Failure("hang", f"analysis did not finish within {limit:.1f}s", text)
    except BaseException as exc:  # noqa: BLE001 - that is the point
        if isinstance(exc, KeyboardInterrupt):
            raise
        failure = Failure("crash", "".join(traceback.format_exception(exc)), text)
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    if failure is None and wall > limit:
        failure = Failure("hang", f"analysis took {wall:.1f}s (limit {limit:.1f}s)", text)
    if failure is None:
        bad = range_problems(text, analysis, path)
        if bad:
            failure = Failure("range", "\n".join(bad[:10]), text)
    if failure is None and slow_factor is not None and cpu > budget_s(text, slow_factor):
        failure = Failure("slow", f"{cpu:.3f}s CPU for {line_count(text)} lines (budget {budget_s(text):.3f}s)", text)
    if failure is not None:
        failure.seconds = wall
    return Checked(failure, wall, cpu, analysis)


def signature(failure: Failure) -> str:
    """What makes two failures the same bug, roughly: kind, and where it came from."""
    if failure.kind == "crash":
        frames = [ln.strip() for ln in failure.detail.splitlines() if ln.strip().startswith("File ")]
        last = failure.detail.strip().splitlines()[-1] if failure.detail.strip() else ""
        return f"crash: {last.split(':')[0]} at {frames[-1] if frames else '?'}"
    if failure.kind == "range":
        first = failure.detail.splitlines()[0]
        return "range: " + re.sub(r"[0-9]+", "N", first.split("(")[0].split(" on line")[0])
    return failure.kind


# ---------------------------------------------------------------- corpus


def torch_dir() -> Optional[pathlib.Path]:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return None
    return pathlib.Path(spec.origin).parent


def corpus_files(include_torch: bool = True, torch_globs: Iterable[str] = ("nn/modules/*.py", "optim/*.py")) -> list[pathlib.Path]:
    """Real PyTorch code: the project's examples and seed cases, then parts of the installed torch."""
    files = sorted((ROOT / "docs" / "examples").glob("*.py")) + sorted((ROOT / "tests" / "fixtures" / "seed_cases").glob("*.py"))
    base = torch_dir() if include_torch else None
    if base is not None:
        for pattern in torch_globs:
            files.extend(sorted(base.glob(pattern)))
    return files


def read(path: pathlib.Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


# ---------------------------------------------------------------- mutators

NOISE = [
    "(", ")", "[", "]", "{", "}", ":", ",", ".", "=", "+=", "-", "*", "**", "@", "\\", "'", '"', '"""', "#",
    "\n", "\r\n", "\r", "\t", " ", "    ", "\x00", "\ufeff", "\x7f", "\u200b",
    "é", "e\u0301", "日本語", "😀", "👩‍👩‍👧", "\U0001f600x", "\ud800",
    "lambda", "yield", "await", "async ", "def ", "class ", "if ", "else:", "for ", "in ", "with ", "return",
    "import torch", "from torch import nn", "del ", "global x", "nonlocal x", "*args", "**kw", "match x:", "case _:",
    "x.backward()", ".detach()", ".requires_grad_()", ".add_(1)", ".numpy()", "torch.no_grad()",
    "loss.backward()", "optimizer.step()", "torch.randn(3, requires_grad=True)", "x = x * 2", "f'{x!r:>{w}}'",
    "# gradsight: ignore", "# gradsight: ignore[GS3]", "@torch.no_grad()\n", "self.", "super().__init__()",
]

# Characters `str.splitlines` treats as line ends but Python and LSP do not (a classic source of shifted
# positions, see test_regressions.py).
LINE_SEPARATORS = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
NOISE += LINE_SEPARATORS


Mutator = Callable[[str, random.Random], str]


def _span(text: str, rng: random.Random, max_len: int = 40) -> tuple[int, int]:
    if not text:
        return 0, 0
    start = rng.randrange(len(text))
    return start, min(len(text), start + rng.randint(1, max_len))


def m_delete(text: str, rng: random.Random) -> str:
    a, b = _span(text, rng)
    return text[:a] + text[b:]


def m_insert(text: str, rng: random.Random) -> str:
    pos = rng.randint(0, len(text))
    return text[:pos] + rng.choice(NOISE) + text[pos:]


def m_insert_separator(text: str, rng: random.Random) -> str:
    """A line separator that is not a line end, inside a comment or string or as whitespace."""
    pos = rng.randint(0, len(text))
    return text[:pos] + rng.choice(LINE_SEPARATORS) + text[pos:]


def m_insert_copy(text: str, rng: random.Random) -> str:
    a, b = _span(text, rng, 200)
    pos = rng.randint(0, len(text))
    return text[:pos] + text[a:b] + text[pos:]


def m_truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randint(0, len(text))]


def m_swap_lines(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def m_dup_line(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return "".join(lines)


def m_delete_lines(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = rng.randrange(len(lines))
    del lines[i: i + rng.randint(1, 8)]
    return "".join(lines)


def m_reindent(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = rng.randrange(len(lines))
    lines[i] = rng.choice(["", " ", "    ", "\t", "        "]) + lines[i].lstrip(" \t")
    return "".join(lines)


def m_line_endings(text: str, rng: random.Random) -> str:
    return _LINE_END.sub(lambda m: rng.choice(["\n", "\r\n", "\r"]) if rng.random() < 0.3 else m.group(0), text)


def m_unicode_names(text: str, rng: random.Random) -> str:
    """Rename identifiers to non-ASCII ones (columns must stay code points)."""
    names = list(set(re.findall(r"\b[a-z_][a-z0-9_]{2,}\b", text)))
    if not names:
        return text
    name = rng.choice(names)
    new = rng.choice(["é" + name, name + "_日本", "ｘ" + name, "ω" * 3])
    return re.sub(rf"\b{re.escape(name)}\b", new, text)


MUTATORS: list[Mutator] = [m_delete, m_insert, m_insert, m_insert_copy, m_truncate, m_swap_lines, m_dup_line,
                           m_delete_lines, m_reindent, m_line_endings, m_unicode_names, m_insert_separator]


def mutate(text: str, rng: random.Random, rounds: Optional[int] = None) -> str:
    for _ in range(rounds if rounds is not None else rng.randint(1, 4)):
        text = rng.choice(MUTATORS)(text, rng)
    return text


def prefixes(text: str, step: int = 1) -> Iterable[str]:
    """Every prefix of `text` (every `step`-th), as when typing it character by character."""
    for end in range(0, len(text) + 1, step):
        yield text[:end]
    if len(text) % step:
        yield text


# ---------------------------------------------------------------- minimisation


def minimize(text: str, still_fails: Callable[[str], bool], max_steps: int = 2000) -> str:
    """Greedy reduction: drop line chunks, then single lines, then characters, while it still fails."""
    steps = 0
    lines = text.splitlines(keepends=True)
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and steps < max_steps:
        i = 0
        changed = False
        while i < len(lines) and steps < max_steps:
            candidate = lines[:i] + lines[i + chunk:]
            steps += 1
            if candidate and still_fails("".join(candidate)):
                lines = candidate
                changed = True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    text = "".join(lines)
    i = 0
    while i < len(text) and steps < max_steps and len(text) < 400:
        candidate = text[:i] + text[i + 1:]
        steps += 1
        if still_fails(candidate):
            text = candidate
        else:
            i += 1
    return text


def same_failure(sig: str, **kwargs) -> Callable[[str], bool]:
    """A predicate for `minimize`: the text still fails with the same `signature`."""
    def check(text: str) -> bool:
        failure = run_checked(text, **kwargs).failure
        return failure is not None and signature(failure) == sig
    return check


# ---------------------------------------------------------------- warm vs cold (incremental re-analysis)


def snapshot(analysis) -> tuple:
    """Everything a front end shows from an analysis, in comparable form."""
    return ([f.to_json() for f in analysis.findings],
            [(f.line, f.column, f.end_line, f.end_column, f.name, f.summary, f.label, f.transition, f.chain)
             for f in analysis.facts],
            list(analysis.problems))


def cold_snapshot(text: str, path: str) -> tuple:
    """The analysis of `text` by a fresh engine: every cache empty (the process's engine keeps its own)."""
    from gradsight.analysis import RULES
    from gradsight.engine import Engine

    return snapshot(Engine().analyze(text, path, rules=RULES))


def incremental_mismatch(before: str, after: str, path: str = "edited.py") -> Optional[str]:
    """Analyse `before` then `after` in this process (warm caches) and `after` alone (cold): a description
    of the difference, or None. An analysis must be a function of the text, whatever ran before it."""
    from gradsight.analysis import RULES
    from gradsight.engine import Engine

    engine = Engine()  # starts empty, like a fresh process; keeps `before`'s parse and results for `after`
    engine.analyze(before, path, rules=RULES)
    warm = snapshot(engine.analyze(after, path, rules=RULES))
    cold = cold_snapshot(after, path)
    if warm == cold:
        return None
    parts = []
    for what, w, c in (("findings", warm[0], cold[0]), ("facts", warm[1], cold[1]), ("problems", warm[2], cold[2])):
        ws, cs = {repr(x) for x in w}, {repr(x) for x in c}
        if ws != cs:
            parts.append(f"{what}: only warm {sorted(ws - cs)[:2]}, only cold {sorted(cs - ws)[:2]}")
    return "; ".join(parts) or "same content, different order"
