"""Applying fixes to text. Fixes themselves are built by the rules (with libcst where a rewrite is needed).

Edits use 1-based lines and code-point columns; `end` is exclusive. Overlapping edits are skipped
(the first one by position wins), as ruff does, so applying "all safe fixes" is always well-defined.
"""

from __future__ import annotations

import re

from typing import Iterable

from .findings import Applicability, Edit, Finding


_NEWLINE = re.compile(r"\r\n|\r|\n")  # where Python (and LSP) end lines; old-Mac "\r" files included


def _offsets(text: str) -> list[int]:
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


def _index(starts: list[int], text: str, line: int, column: int) -> int:
    line = max(1, min(line, len(starts)))
    base = starts[line - 1]
    if line < len(starts):
        end = starts[line] - 1
        if end > base and text[end - 1] == "\r" and text[end] == "\n":
            end -= 1  # the line's content stops before "\r\n"
    else:
        end = len(text)
    return min(base + max(column - 1, 0), end)


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, int]:
    """Apply non-overlapping edits; returns (new_text, number_applied)."""
    starts = _offsets(text)
    spans = sorted(
        ((_index(starts, text, e.line, e.column), _index(starts, text, e.end_line, e.end_column), e) for e in edits),
        key=lambda s: (s[0], s[1]),
    )
    chosen: list[tuple[int, int, Edit]] = []
    last_end = -1
    for start, end, edit in spans:
        if start < last_end or (start == last_end and chosen and chosen[-1][0] == chosen[-1][1] == start):
            continue
        chosen.append((start, end, edit))
        last_end = end
    out = text
    for start, end, edit in reversed(chosen):
        out = out[:start] + edit.new_text + out[end:]
    return out, len(chosen)


def apply_fixes(text: str, findings: Iterable[Finding], *, unsafe: bool = False) -> tuple[str, int]:
    """Apply each finding's fix as a unit (all of its edits or none). Returns (new_text, fixes_applied)."""
    allowed = {Applicability.SAFE} | ({Applicability.UNSAFE} if unsafe else set())
    starts = _offsets(text)
    taken: list[tuple[int, int]] = []
    edits: list[Edit] = []
    count = 0
    for finding in sorted(findings, key=lambda f: (f.line, f.column)):
        fix = finding.fix
        if fix is None or fix.applicability not in allowed:
            continue
        spans = [(_index(starts, text, e.line, e.column), _index(starts, text, e.end_line, e.end_column)) for e in fix.edits]
        if any(s < te and ts < e or (s == e == ts == te) for s, e in spans for ts, te in taken):
            continue
        taken.extend(spans)
        edits.extend(fix.edits)
        count += 1
    new_text, _ = apply_edits(text, edits)
    return new_text, count
