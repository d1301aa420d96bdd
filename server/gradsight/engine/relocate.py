"""Positions of cached results: moving a unit's cached findings and facts to where its code is now
(`Relocation`), and turning results into what leaves the engine (`plain`)."""

from __future__ import annotations

import ast
import bisect
import re
from collections import OrderedDict
from typing import Optional

from ..findings import Edit, Finding, Fix, Related
from .api import StateFact
from .report import Line, Source, Text
from .values import UNKNOWN_REACH, Fact


_ASCII_DIGITS = re.compile("[0-9]+")


class Relocation:
    """Moves cached results from the positions of the version they were computed in (`old`, a `Digests.frame`)
    to the current one (`new`), or says it cannot (None), so that they equal what analysing afresh gives.

    The parts of the two frames correspond one to one (equal shapes). A line in a part whose text is unchanged
    moves with it; a line in an edited part, or between parts, has no image, and results that hold one are not
    reused. Line numbers are found where they are, as data: `report.Line` values (what `Source.span` gives),
    sites (path, line, column) and facts of this file, and the `Line` parts of messages and summaries built as
    `report.Text`. No string is rewritten: a number inside a string that could be a moved line (e.g. one a rule
    formatted from `node.lineno` into an f-string) makes the results not reusable, as do module-parameter entries
    (`ParamCut`, `ParamReach`: the interpreter orders those by the text of their sites). This relies on the
    analysis treating positions as labels: equal, ordered, printed, never computed with across parts."""

    @classmethod
    def between(cls, old: tuple, new: tuple, path: str, recent: "OrderedDict[tuple, Relocation]") -> "Relocation":
        """The relocation from frame `old` to frame `new`; `recent` (the engine's, see `units.UnitCache`) keeps
        the last few, since every unit of one analysis moves between the same two frames."""
        key = (id(old), id(new), path)
        found = recent.get(key)
        if found is None or found.old is not old or found.new is not new:
            found = recent[key] = cls(old, new, path)
            while len(recent) > 8:
                recent.popitem(last=False)
        return found

    def __init__(self, old: tuple, new: tuple, path: str):
        self.old, self.new, self.path = old, new, path
        self.ok = len(old) == len(new)
        parts = []  # (old first line, old last line, shift or None)
        low = float("inf")
        if self.ok:
            for (s0, e0, t0), (s1, e1, t1) in zip(old, new):
                same = t0 == t1 and e0 - s0 == e1 - s1
                if s1 != s0:  # (an edited part that did not move is not read by what is reused: see the keys)
                    low = min(low, s0)
                parts.append((s0, e0, s1 - s0 if same else None))
        elif old and new:
            # Parts were added or removed (only a key that leaves module-level statements out allows that: the
            # reverse direction's, see `reverse.py`): the unchanged parts before and after the edit correspond, the
            # old parts between them have no image, and every line from the first of them on is looked up.
            self.ok = True
            n = min(len(old), len(new))

            def alike(a: tuple, b: tuple) -> bool:
                return a[2] == b[2] and a[1] - a[0] == b[1] - b[0]

            head = 0
            while head < n and alike(old[head], new[head]):
                head += 1
            tail = 0
            while tail < n - head and alike(old[-1 - tail], new[-1 - tail]):
                tail += 1
            for (s0, e0, _), (s1, _, _) in list(zip(old[:head], new[:head])) + \
                    list(zip(old[len(old) - tail:], new[len(new) - tail:])):
                if s1 != s0:
                    low = min(low, s0)
                parts.append((s0, e0, s1 - s0))
            for s0, e0, _ in old[head:len(old) - tail]:
                low = min(low, s0)
                parts.append((s0, e0, None))
        self.parts = sorted(parts)
        self.starts = [p[0] for p in self.parts]
        self.low = low  # every line above this one is where it was

    def line(self, n: int) -> Optional[int]:
        """Where old line `n` is now; None where it has no certain image."""
        if n < self.low:
            return n
        k = bisect.bisect_right(self.starts, n) - 1
        shift = None
        for s0, e0, d in self.parts[max(0, k - 3):k + 1]:  # parts overlap only where statements share a line
            if s0 <= n <= e0:
                if d is None or (shift is not None and d != shift):
                    return None
                shift = d
        return None if shift is None else n + shift

    # ---- values holding positions
    def pos(self, v):
        """A line field: a `Line` moves; a plain number must be one that does not move."""
        if type(v) is Line:
            n = self.line(v)
            if n is None:
                raise Unmovable
            return Line(n)
        if v is None or (isinstance(v, int) and v < self.low):
            return v
        raise Unmovable

    def text(self, s):
        """A message: its `Line` parts move (data); digits in its strings could be a line printed as a number, so
        one at or below a moved line makes the results not reusable."""
        if type(s) is Text:
            parts = []
            for p in s.parts:
                if type(p) is Line:
                    n = self.line(p)
                    if n is None:
                        raise Unmovable
                    parts.append(Line(n))
                else:
                    self.text(p)
                    parts.append(p)
            return Text(tuple(parts))
        for m in _ASCII_DIGITS.finditer(s):
            if int(m.group()) >= self.low:
                raise Unmovable
        return s

    def args(self, args: tuple) -> tuple:
        """A fact's arguments are strings as written in the source (expressions, names, ops): like any text, one
        that holds a number as large as the first moved line might be a line number, so it is not moved."""
        return tuple((k, self.text(v) if isinstance(v, str) else v) for k, v in args)

    def site(self, site):
        if site == UNKNOWN_REACH:
            return site
        if type(site) is not tuple or len(site) != 3:
            raise Unmovable  # ParamCut, ParamReach and anything unknown
        if site[0] != self.path:
            return site
        n = self.line(site[1]) if isinstance(site[1], int) else None
        if n is None:
            raise Unmovable
        return (site[0], n, site[2])

    def fact(self, f):
        if f is None:
            return None
        if type(f) is not Fact:
            raise Unmovable
        parent = self.fact(f.parent)
        if f.path is not None and f.path != self.path:
            return Fact(f.line, f.column, f.kind, self.args(f.args), parent, f.path)
        if f.path is not None:
            n = self.line(f.line) if isinstance(f.line, int) else None
            if n is None:
                raise Unmovable
            line = Line(n) if type(f.line) is Line else n
        else:
            line = self.pos(f.line)
        return Fact(line, f.column, f.kind, self.args(f.args), parent, f.path)

    def finding(self, f):
        if f.extra:
            raise Unmovable
        related = tuple(Related(r.path, self.pos(r.line) if r.path == self.path else r.line, r.column,
                                self.text(r.message)) for r in f.related)
        fix = f.fix
        if fix is not None:
            fix = Fix(self.text(fix.title), fix.applicability,
                      tuple(Edit(self.pos(e.line), e.column, self.pos(e.end_line), e.end_column, self.text(e.new_text))
                            for e in fix.edits))
        return Finding(f.path, self.pos(f.line), f.column, self.pos(f.end_line), f.end_column, f.code,
                       self.text(f.name), f.severity, self.text(f.message), related, fix)

    def state_fact(self, f):
        return StateFact(self.pos(f.line), f.column, self.pos(f.end_line), f.end_column, self.text(f.name),
                         self.text(f.summary), self.text(f.label),
                         tuple((self.pos(line), self.text(t)) for line, t in f.chain), f.transition, f.uncertain)

    def finding_key(self, k: tuple) -> tuple:  # (code, line, column)
        return (k[0], self.pos(k[1])) + tuple(k[2:])

    def span_key(self, k: tuple) -> tuple:  # (line, column, end line, end column)
        return (self.pos(k[0]), k[1], self.pos(k[2])) + tuple(k[3:])

    def delta(self, delta: tuple) -> Optional[tuple]:
        """A unit's results (see `_isolated`) at the current positions, or None."""
        if not self.ok:
            return None
        if self.low == float("inf"):
            return delta
        findings, facts, leaves, cuts, reached, saw, files = delta
        try:
            return (tuple((self.finding_key(k), self.finding(f)) for k, f in findings),
                    tuple((self.span_key(k), self.state_fact(f)) for k, f in facts),
                    tuple((self.site(k), (self.text(label), self.fact(created))) for k, (label, created) in leaves),
                    tuple((self.site(k), self.fact(v)) for k, v in cuts),
                    frozenset(self.site(x) for x in reached), saw, files)
        except (Unmovable, TypeError, ValueError, AttributeError):
            return None


class Unmovable(Exception):
    """Results that `Relocation` cannot move with certainty."""


def plain(f, memo: dict):
    """A finding or fact as it leaves the engine: plain strings (a `Text` is rendered) and plain ints (see
    `report.Line`). `memo` (the engine's) keeps the conversion of results reused from a cache, keyed by identity."""
    cached = memo.get(id(f))
    if cached is not None and cached[0] is f:
        return cached[1]
    if isinstance(f, Finding):
        fix = f.fix
        if fix is not None:
            fix = Fix(_ascii(fix.title), fix.applicability,
                      tuple(Edit(int(e.line), e.column, int(e.end_line), e.end_column, _ascii(e.new_text))
                            for e in fix.edits))
        out = Finding(f.path, int(f.line), f.column, int(f.end_line), f.end_column, f.code, _ascii(f.name),
                      f.severity, _ascii(f.message),
                      tuple(Related(r.path, int(r.line), r.column, _ascii(r.message)) for r in f.related), fix,
                      f.extra)
    else:
        out = StateFact(int(f.line), f.column, int(f.end_line), f.end_column, _ascii(f.name), _ascii(f.summary),
                        _ascii(f.label), tuple((int(line), _ascii(t)) for line, t in f.chain), f.transition,
                        f.uncertain)
    if len(memo) > 50_000:
        memo.clear()
    memo[id(f)] = (f, out)
    return out


def _ascii(s) -> str:
    return str(s) if type(s) is Text else s


def located(site: tuple, source: Source) -> ast.AST:
    node = ast.Pass()
    node.lineno = site[1]
    node.col_offset = site[2]
    line_text = source.line_text(site[1]).encode("utf-8")
    node.end_lineno = site[1]
    node.end_col_offset = len(line_text.rstrip())
    return node


# Results of analysing one function on its own, reused across analyses while the user types:
# key -> (dependencies, whole-text digest or None, delta). See `analyse_definitions`.
