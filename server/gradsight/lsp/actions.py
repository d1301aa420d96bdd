"""Code actions as text operations: quick fixes read back from a diagnostic, "fix all", "ignore".

Everything here works on engine values and plain text; `session.py` wraps the results into LSP
`CodeAction`s and `WorkspaceEdit`s through `convert.py`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping

from ..findings import Applicability, Edit, Finding, Fix
from ..fixes import apply_fixes

FIX_ALL_KIND = "source.fixAll.gradsight"
IGNORE_COMMENT = "# gradsight: ignore[{codes}]"
_IGNORE = re.compile(r"#\s*gradsight:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")


def fix_from_data(data: Any) -> Fix | None:
    """The fix stored in a diagnostic's `data` (see `convert.diagnostic_data`), or None."""
    if not isinstance(data, Mapping) or not isinstance(data.get("fix"), Mapping):
        return None
    fix = data["fix"]
    try:
        return Fix(
            title=str(fix["title"]),
            applicability=Applicability(fix["applicability"]),
            edits=tuple(Edit(int(e["line"]), int(e["column"]), int(e["end_line"]), int(e["end_column"]),
                             str(e["new_text"])) for e in fix["edits"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def shift(finding: Finding, offset: int) -> Finding:
    """Move a finding (and its fix) up by `offset` lines: module lines -> notebook cell lines."""
    if offset == 0:
        return finding
    fix = finding.fix
    if fix is not None:
        fix = replace(fix, edits=tuple(replace(e, line=e.line - offset, end_line=e.end_line - offset)
                                       for e in fix.edits))
    return replace(finding, line=finding.line - offset, end_line=finding.end_line - offset, fix=fix)


def fix_all(text: str, findings: list[Finding]) -> tuple[str, int]:
    """The text with every safe fix applied (gradsight.fixes decides overlaps), and how many."""
    return apply_fixes(text, findings, unsafe=False)


def minimal_replacement(old: str, new: str) -> tuple[int, int, str] | None:
    """The smallest single replacement turning `old` into `new`: (start, end, text) in `old`'s
    code-point offsets, or None when they are equal. Never splits a `\\r\\n` pair."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    if _splits_crlf(old, start) or _splits_crlf(new, start):
        start -= 1
    suffix = 0
    while suffix < limit - start and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    end_old, end_new = len(old) - suffix, len(new) - suffix
    while _splits_crlf(old, end_old) or _splits_crlf(new, end_new):
        end_old += 1
        end_new += 1
    return start, end_old, new[start:end_new]


def _splits_crlf(text: str, i: int) -> bool:
    return 0 < i < len(text) and text[i - 1] == "\r" and text[i] == "\n"


def ignore_edit(line_text: str, code: str) -> tuple[int, int, str] | None:
    """How to silence `code` on a line: (start column, end column, new text), 1-based code points.

    Extends an existing `# gradsight: ignore[...]` comment, or appends one. None when the line is
    already silenced or cannot take a comment (a backslash continuation).
    """
    match = _IGNORE.search(line_text)
    if match is not None:
        if match.group("codes") is None:
            return None  # a bare `# gradsight: ignore` silences every rule already
        codes = [c.strip() for c in match.group("codes").split(",") if c.strip()]
        if code in codes:
            return None
        return match.start("codes") + 1, match.end("codes") + 1, ", ".join([*codes, code])
    stripped = line_text.rstrip()
    if stripped.endswith("\\"):
        return None
    comment = IGNORE_COMMENT.format(codes=code)
    return len(stripped) + 1, len(line_text) + 1, ("  " if stripped else "") + comment
