"""Incremental parsing: the syntax tree of a new version of a file from the previous version's, re-parsing only
the top-level statements an edit touched (`reparse`). The previous versions are kept by the `Engine`."""

from __future__ import annotations

import ast
import bisect
from typing import Optional


class FileState:
    __slots__ = ("text", "lines", "tree", "starts", "digests", "broken", "parsed", "errors", "original")

    def __init__(self, text: str, lines: list, tree: ast.Module, digests: dict, chunked: "Optional[Chunks]" = None):
        self.text, self.lines, self.tree = text, lines, tree
        self.starts = [first_line(st) for st in tree.body]  # each top-level statement's first line
        self.digests = digests  # node -> digest of its text and position (see `Digests`)
        # A text that does not parse: `tree` holds only the chunks that do (`recover_chunks`), and is no base for
        # `reparse`. `parsed`/`errors`: its chunks' parses, reused by the next version's `recover_chunks`.
        self.broken = bool(chunked is not None and chunked.failed)
        self.parsed = chunked.parsed if chunked is not None else None
        self.errors = chunked.errors if chunked is not None else None
        # When the text parsed is a rewrite of the file's (`newsyntax`: Python 3.12 syntax on an older Python),
        # the file's own text as last chunked, the base of the next version's first, failing, parse.
        self.original: Optional["FileState"] = None


def first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators]) if decorators else node.lineno


def _boundary_ok(body: list, starts: list, lines: list, k: int) -> bool:
    """Does top-level statement `k` start a fresh logical line at column 0 (so the text before it parses on its
    own and the text from it on does too)? Not after a backslash continuation, not sharing a line (`a; b`)."""
    if k == 0:
        return True
    if k >= len(body):
        return True
    start = starts[k]
    if body[k - 1].end_lineno >= start or start < 2:
        return False
    first = lines[start - 1]
    stmt = body[k]
    if getattr(stmt, "decorator_list", None):
        if not first.startswith("@"):
            return False
    elif stmt.col_offset != 0 or not first[:1] or first[:1].isspace():
        return False
    return not lines[start - 2].endswith("\\")


def reparse(previous: FileState, text: str, lines: list, shift: bool = True,
            hint: Optional[list] = None) -> Optional[ast.Module]:
    """The syntax tree of `text`, re-parsing only the top-level statements an edit touched and reusing the
    previous version's other statements (shared, never mutated; those after an edit that added or removed lines
    are copied with their positions shifted, `shift_node`); None where that is not certain to equal
    `ast.parse(text)`: an edit across an unusual statement boundary, or a changed region that does not parse on
    its own."""
    old = previous.lines
    n = len(lines)
    if "barry_as_FLUFL" in text:
        return None
    if len(old) != n:
        return _reparse_shifted(previous, text, lines, hint) if shift else None
    body, starts = previous.tree.body, previous.starts
    if previous.text == text:
        return previous.tree
    a = 0
    while a < n and old[a] == lines[a]:
        a += 1
    if a == n:
        return previous.tree  # only line endings differ: same tree
    b = n - 1
    while b > a and old[b] == lines[b]:
        b -= 1
    if not body:
        return None
    # Changed lines are a+1 .. b+1 (1-based). The chunk runs from the start of the first statement touched
    # (line 1 for the first) to the line before the next untouched statement (the end of the file for the last).
    i = max(0, bisect.bisect_right(starts, a + 1) - 1)
    j = max(0, bisect.bisect_right(starts, b + 1) - 1)
    if not (_boundary_ok(body, starts, old, i) and _boundary_ok(body, starts, old, j + 1)):
        return None
    first = starts[i] if i > 0 else 1
    last = starts[j + 1] - 1 if j + 1 < len(body) else n
    if j + 1 < len(body) and lines[last - 1].endswith("\\"):
        return None
    part = _parse_lines(lines, first, last, hint)
    if part is None:
        return None
    return ast.Module(body=body[:i] + part.body + body[j + 1:], type_ignores=[])


def _parse_lines(lines: list, first: int, last: int, hint: Optional[list] = None) -> Optional[ast.Module]:
    """Parse lines `first`..`last` (1-based) alone, padded with blank lines so positions are the file's. On a
    syntax error the failed chunk is appended to `hint` for the syntax-error recovery, which would otherwise
    parse it again."""
    chunk = "\n" * (first - 1) + "\n".join(lines[first - 1:last]) + ("\n" if last < len(lines) else "")
    try:
        return ast.parse(chunk)
    except SyntaxError as exc:
        if hint is not None:
            hint.append(((chunk[first - 1:], first), (exc.msg, exc.lineno or first, exc.offset or 1)))
    except (ValueError, RecursionError, MemoryError):
        pass
    return None


def _reparse_shifted(previous: FileState, text: str, lines: list,
                     hint: Optional[list] = None) -> Optional[ast.Module]:
    """`reparse` for an edit that changed the number of lines: the statements before the edit are shared, the
    ones it touched re-parsed, the ones after it copied `delta` lines down (or up)."""
    old, body, starts = previous.lines, previous.tree.body, previous.starts
    n_old, n = len(old), len(lines)
    if not body or n_old < 2:
        return None
    p = 0
    top = min(n_old, n)
    while p < top and old[p] == lines[p]:
        p += 1
    q = 0
    while q < top - p and old[n_old - 1 - q] == lines[n - 1 - q]:
        q += 1
    delta = n - n_old
    # Old lines p+1 .. n_old-q (1-based) were replaced; widened by the line before, so that lines inserted
    # between two statements re-parse the one above them with them.
    a = max(1, p)
    b = max(a, n_old - q)
    i = max(0, bisect.bisect_right(starts, a) - 1)
    j = max(0, bisect.bisect_right(starts, b) - 1)
    if not (_boundary_ok(body, starts, old, i) and _boundary_ok(body, starts, old, j + 1)):
        return None
    first = starts[i] if i > 0 else 1
    last_old = starts[j + 1] - 1 if j + 1 < len(body) else n_old
    last = last_old + delta if j + 1 < len(body) else n
    if last < first - 1 or (j + 1 < len(body) and (last_old < b or last < 1 or lines[last - 1].endswith("\\"))):
        return None
    part = _parse_lines(lines, first, last, hint)
    if part is None:
        return None
    if part.body and first_line(part.body[0]) < first:
        return None
    tail = body[j + 1:]
    if delta:
        memo = previous.digests
        shifted = []
        for st in tail:
            new = shift_node(st, delta)
            carry_digests(memo, st, new)
            shifted.append(new)
        tail = shifted
    return ast.Module(body=body[:i] + part.body + tail, type_ignores=[])


def shift_node(node: ast.AST, delta: int) -> ast.AST:
    """A copy of `node` with every line number moved by `delta` (the original is shared: never mutated)."""
    cls = type(node)
    new = cls.__new__(cls)
    d = new.__dict__
    d.update(node.__dict__)
    if "lineno" in d:
        d["lineno"] += delta
        if d.get("end_lineno") is not None:
            d["end_lineno"] += delta
    for field in cls._fields:
        v = d.get(field)
        if type(v) is list:
            d[field] = [shift_node(x, delta) if isinstance(x, ast.AST) and x.__dict__ else x for x in v]
        elif isinstance(v, ast.AST) and v.__dict__:
            d[field] = shift_node(v, delta)
    return new


def carry_digests(memo: dict, old: ast.AST, new: ast.AST) -> None:
    """Text digests do not depend on position: a shifted copy keeps its original's (and so do its methods')."""
    digest = memo.get(old)
    if digest is not None:
        memo[new] = digest
    if isinstance(old, ast.ClassDef):
        skeleton = memo.get((old, "skeleton"))
        if skeleton is not None:
            memo[(new, "skeleton")] = skeleton
        for a, b in zip(old.body, new.body):
            digest = memo.get(a)
            if digest is not None:
                memo[b] = digest


