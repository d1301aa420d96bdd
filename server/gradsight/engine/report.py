"""Turning events into findings: positions, suppressions, settings, de-duplication.

`Source` converts the stdlib `ast`'s UTF-8 byte columns into the code-point columns of our contract.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from ..config import Config
from ..findings import Applicability, Edit, Finding, Fix, Related, Severity
from .astwalk import walk as _walk
from .values import Fact

_NEWLINE = re.compile(r"\r\n|\r|\n")
IGNORE_RE = re.compile(r"#\s*gradsight:\s*ignore(?:\[([A-Za-z0-9_,\s-]+)\])?")


def split_lines(text: str) -> list[str]:
    """The file's lines, split exactly where Python's tokenizer ends lines (str.splitlines also splits on \\f,
    \\x1c, \\u2028..., which would shift line numbers against the ast's)."""
    return text.split("\n") if "\r" not in text else _NEWLINE.split(text)


class Line(int):
    """A 1-based line number of the analysed file, as `Source.span` gives it when `mark` is set: a position, so
    results that hold it can be moved when the driver reuses a definition's results after lines were inserted
    above it (`relocate.Relocation`). It compares, hashes and prints as its int. A message that names a line keeps
    it as data in a `Text`; a line formatted into a plain string is just digits, which relocation treats as
    possibly a moved line (such results are recomputed instead of moved)."""

    __slots__ = ()


class Text:
    """A message or summary that names lines of the analysed file: its parts are strings and `Line`s, so moving
    cached results shifts the numbers in the data, never digits in a string. `str()` is the text shown; it
    compares and hashes by its parts. Build one with `text(...)`; `+` joins texts and strings."""

    __slots__ = ("parts", "_hash")

    def __init__(self, parts: tuple) -> None:
        self.parts = parts
        self._hash = None

    def __str__(self) -> str:
        return "".join(p if type(p) is str else str(int(p)) for p in self.parts)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Text({self.parts!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is Text and other.parts == self.parts

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(("Text", self.parts))
        return self._hash

    def __add__(self, other) -> "Text":
        return text(self, other)

    def __radd__(self, other) -> "Text":
        return text(other, self)


def text(*pieces) -> "Text | str":
    """Join strings, `Line`s (kept as data), other numbers (printed) and `Text`s into one message; a plain `str`
    when no line of the analysed file is in it."""
    parts: list = []
    for piece in pieces:
        if piece is None:
            continue
        if type(piece) is Text:
            parts.extend(piece.parts)
        elif type(piece) is Line:
            parts.append(piece)
        else:
            parts.append(piece if type(piece) is str else str(piece))
    merged: list = []
    for p in parts:
        if type(p) is str and merged and type(merged[-1]) is str:
            merged[-1] += p
        elif p != "":
            merged.append(p)
    if not any(type(p) is Line for p in merged):
        return "".join(merged)
    return Text(tuple(merged))


class Source:
    def __init__(self, text: str, lines: Optional[list[str]] = None, mark: bool = False):
        self.text = text
        self.lines = lines if lines is not None else split_lines(text)
        self._bytes: dict[int, bytes] = {}
        self.mark = mark  # `span` gives `Line`s (the driver sets this for the file it analyses)
        # id(node) -> (node, span) and (node, text): the interpreter asks again for the same nodes on every round
        # of a loop's fixpoint (facts, hover records); the node is kept, so its id cannot be reused meanwhile.
        self._spans: dict = {}
        self._segments: dict = {}
        self._walks: dict = {}  # id(node) -> (node, `astwalk.walk(node)`), for the analysed file only (`walk`)

    def line_text(self, line: int) -> str:
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else ""

    def line_span(self, line: int) -> tuple[int, int, int, int]:
        """The span of line `line`'s text, indentation and trailing blanks left out (1-based columns): a finding on
        a whole statement line."""
        text = self.line_text(line)
        return (line, len(text) - len(text.lstrip()) + 1, line, len(text.rstrip()) + 1)

    def cp_col(self, line: int, byte_col: int) -> int:
        """1-based code-point column from ast's 0-based UTF-8 byte offset."""
        text = self.line_text(line)
        if text.isascii():
            return min(byte_col, len(text)) + 1
        return len(self._line_bytes(line)[:byte_col].decode("utf-8", errors="ignore")) + 1

    @staticmethod
    def _remembered(memo: dict, node: ast.AST, compute):
        hit = memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        out = compute(node)
        memo[id(node)] = (node, out)
        return out

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        return self._remembered(self._spans, node, self._span)

    def walk(self, node: ast.AST) -> list:
        """`astwalk.walk(node)`. For the analysed file's source (`mark`: one analysis) it is memoised per node, so
        the interpreter's loop and function walks, the whole-file query's and the rules' share one list per node
        (a long script's functions and loops were each walked three or four times). Callers only read it."""
        if not self.mark:
            return _walk(node)
        return self._remembered(self._walks, node, _walk)

    def _span(self, node: ast.AST) -> tuple[int, int, int, int]:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        col = self.cp_col(line, getattr(node, "col_offset", 0))
        end_col = self.cp_col(end_line, getattr(node, "end_col_offset", None) or 0)
        if end_line == line and end_col < col:
            end_col = col
        if self.mark:
            return Line(line), col, Line(end_line), end_col
        return line, col, end_line, end_col

    def _line_bytes(self, line: int) -> bytes:
        raw = self._bytes.get(line)
        if raw is None:
            raw = self._bytes[line] = self.line_text(line).encode("utf-8")
        return raw

    def segment(self, node: ast.AST) -> str:
        """The source text of a node (like ast.get_source_segment, without re-splitting the file per call)."""
        return self._remembered(self._segments, node, self._segment)

    def _segment(self, node: ast.AST) -> str:
        try:
            line, end_line = node.lineno, node.end_lineno
            col, end_col = node.col_offset, node.end_col_offset
        except AttributeError:
            return "<expr>"
        if end_line is None or end_col is None or not (1 <= line <= end_line <= len(self.lines)):
            return "<expr>"
        if line == end_line:
            return self._line_bytes(line)[col:end_col].decode("utf-8", errors="replace")
        parts = [self._line_bytes(line)[col:].decode("utf-8", errors="replace")]
        parts += [self.line_text(n) for n in range(line + 1, end_line)]
        parts.append(self._line_bytes(end_line)[:end_col].decode("utf-8", errors="replace"))
        return "\n".join(parts)

    def suppressed(self, line: int, code: str) -> bool:
        m = IGNORE_RE.search(self.line_text(line))
        if not m:
            return False
        if m.group(1) is None:
            return True
        codes = {c.strip().upper() for c in m.group(1).split(",")}
        return any(code.startswith(c) for c in codes if c)


def edit_for(source: Source, node: ast.AST, new_text: str) -> Edit:
    line, col, end_line, end_col = source.span(node)
    return Edit(line, col, end_line, end_col, new_text)


def insert_after(source: Source, node: ast.AST, text: str) -> Edit:
    _, _, end_line, end_col = source.span(node)
    return Edit(end_line, end_col, end_line, end_col, text)


@dataclass(frozen=True)
class Note:
    """A place a rule names in its own words, for a finding's `related` list ("raises here"). A rule's message is
    where words are made, so a note is text; what the engine knows is a `values.Fact` (kind and arguments)."""

    line: int
    column: int
    text: str
    path: Optional[str] = None


class Reporter:
    """Collects findings for one file. Rules call `add`; settings and suppressions are applied here."""

    def __init__(self, path: str, source: Source, config: Config):
        self.path = path
        self.source = source
        self.config = config
        self.findings: dict[tuple, Finding] = {}
        self._tree: Optional[ast.Module] = None
        # How often a rule read the whole tree: a finding that depends on the whole file cannot be cached with
        # one definition's results (the driver checks this counter around each definition it caches).
        self.tree_reads = 0
        # While a caller in another workspace file runs this file's code (`reverse.py`): the call that entered this
        # file, as a `Note`. Findings made then are evidence from use: a warning at most, the caller in `related`.
        self.via: Optional[Callable[[], Optional[Note]]] = None

    @property
    def tree(self) -> Optional[ast.Module]:
        """The whole module (set by the driver); rules use it to build fixes and for file-wide questions."""
        self.tree_reads += 1
        return self._tree

    @tree.setter
    def tree(self, value: Optional[ast.Module]) -> None:
        self._tree = value

    def related(self, facts: Iterable[Optional[Fact]]) -> tuple[Related, ...]:
        out: list[Related] = []
        seen: set[tuple[int, str]] = set()
        for fact in facts:
            if fact is None or (fact.line, fact.text) in seen:
                continue
            seen.add((fact.line, fact.text))
            out.append(Related(fact.path or self.path, fact.line, fact.column, fact.text))
        return tuple(out)

    def add(self, rule, node: ast.AST, message: str, *, severity: Severity | None = None,
            related: Iterable[Optional[Fact]] = (), fix: Fix | None = None,
            span: tuple[int, int, int, int] | None = None) -> None:
        code = rule.code
        if not self.config.is_enabled(code):
            return
        line, col, end_line, end_col = span or self.source.span(node)
        if self.source.suppressed(line, code):
            return
        sev = self.config.severity_for(code, severity or rule.severity)
        via = self.via() if self.via is not None else None
        if via is not None:
            sev = Severity.WARNING if sev.rank > Severity.WARNING.rank else sev
            related = (*related, via)
        key = (code, line, col)
        previous = self.findings.get(key)
        if previous is not None and previous.severity.rank >= sev.rank:
            return
        self.findings[key] = Finding(self.path, line, col, end_line, end_col, code, rule.name, sev, message,
                                     self.related(related), fix)

    def add_in(self, rule, at: Fact, message: str, *, severity: Severity | None = None,
               related: Iterable[Optional[Fact]] = ()) -> bool:
        """A finding on the statement at `at` in another workspace file (the statement to change is there: a
        metric's `self.total += pred` that the training loop here makes keep graphs). Needs that file's text,
        which the engine hands in through `source_of` (only files this analysis read); returns False when it is
        not available, so the rule can report in this file instead. The finding spans the statement's line from
        `at`'s column; suppression comments of that file apply."""
        if at.path is None or at.path == self.path:
            return False
        if self.via is not None and self.via() is not None:
            return True  # a caller's run (`reverse.py`): that file's own analysis reports what its code does there
        source = self.source_of(at.path)
        if source is None or not isinstance(at.line, int) or not 1 <= at.line <= len(source.lines):
            return False
        code = rule.code
        if not self.config.is_enabled(code):
            return True
        line = int(at.line)
        if source.suppressed(line, code):
            return True
        text = source.line_text(line)
        col = max(1, min(at.column, len(text) + 1))
        sev = self.config.severity_for(code, severity or rule.severity)
        key = (code, line, col, at.path)
        previous = self.findings.get(key)
        if previous is not None and previous.severity.rank >= sev.rank:
            return True
        self.findings[key] = Finding(at.path, line, col, line, len(text.rstrip()) + 1, code, rule.name, sev, message,
                                     self.related(related), None)
        return True

    @staticmethod
    def source_of(path: str) -> Optional[Source]:
        """The text of another file this analysis read (replaced per analysis by the engine); none by default."""
        return None


def make_fix(title: str, applicability: Applicability, *edits: Edit) -> Fix:
    return Fix(title, applicability, tuple(edits))
