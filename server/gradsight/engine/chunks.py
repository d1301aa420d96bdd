"""Syntax-error recovery: text that does not parse is cut into top-level chunks (`recover_chunks`); only the
chunks that do not parse on their own are skipped. `parse_prefix` is the fallback where the cut is not certain."""

from __future__ import annotations

import ast
import bisect
import re
from typing import Optional

from .incremental import FileState, carry_digests, first_line, shift_node


def parse_prefix(text: str, exc: SyntaxError) -> Optional[ast.Module]:
    """Analyse what parses: the lines before the syntax error (mid-typing), dropping a dangling block. The
    fallback of syntax-error recovery, where `recover_chunks` cannot cut the text with certainty."""
    lines = text.splitlines(keepends=True)
    stop = max(0, (exc.lineno or 1) - 1)
    # Candidate cut points: just before the error, then earlier top-level statement starts. Bounded tries,
    # so a syntax error at the end of a 50,000-line file costs a handful of parses, not thousands.
    candidates = [stop]
    for i in range(stop - 1, 0, -1):
        if len(candidates) >= 6:
            break
        if lines[i][:1] not in (" ", "\t", "\n", "\r", "#", ")", "]", "}") and lines[i].strip():
            candidates.append(i)
    for cut in candidates:
        try:
            return ast.parse("".join(lines[:cut]))
        except SyntaxError:
            continue
        except (RecursionError, MemoryError, ValueError):
            return None
    return None



# ---------------------------------------------------------------- syntax-error recovery

_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")  # a column-0 line that continues the statement above
_DEFINES = re.compile(r"(?:def|class|async[ \t\f]+def)\b")  # can never stand inside brackets
_QUOTES = re.compile(r"#|'''|\"\"\"|'|\"|[()\[\]{}]|\\")
_STRING_END = {d: re.compile(pattern) for d, pattern in (
    ("'", r"(?:[^'\\]|\\.)*'"), ('"', r'(?:[^"\\]|\\.)*"'),
    ("'''", r"(?:[^\\]|\\.)*?'''"), ('"""', r'(?:[^\\]|\\.)*?"""'))}
_NOT_CODE = " \t\x0c#)]}\\"  # first characters of lines that start no chunk (a lone backslash joins the next line)
_PREFIXES = {"r", "u", "b", "f", "t", "br", "rb", "fr", "rf", "tr", "rt"}


class _Unsure(Exception):
    """The text holds something the chunker cannot read with certainty: fall back to the prefix analysis."""


class Chunks:
    """The outcome of `recover_chunks`: the module made of the chunks that parse (`tree`), the chunks that do not
    (`failed`: first line, last line, message, error line, error column), and the parses to reuse next time."""

    __slots__ = ("tree", "failed", "parsed", "errors")

    def __init__(self, tree: ast.Module, failed: list, parsed: dict, errors: dict):
        self.tree, self.failed, self.parsed, self.errors = tree, failed, parsed, errors


def _candidates(lines: list) -> list:
    """Lines (1-based) where a top-level chunk may start, by the text alone: line 1, and every line that begins
    at column 0 with code (not blank, not a comment, not a closing bracket or backslash), does not continue a compound
    statement (`else`, `elif`, `except`, `finally`), does not follow a line ending in a backslash, and is not
    preceded by a decorator (the nearest column-0 code line above it does not start with `@`)."""
    out = [1]
    above = ""  # first character of the nearest column-0 code line so far
    prev = lines[0] if lines else ""
    if prev[:1] and prev[:1] not in _NOT_CODE:
        above = prev[:1]
    for k in range(1, len(lines)):
        line = lines[k]
        c = line[:1]
        if not c or c in _NOT_CODE:
            prev = line
            continue
        if above != "@" and not prev.endswith("\\") and not ((c == "e" or c == "f") and _CONTINUES.match(line)):
            out.append(k + 1)
        above = c
        prev = line
    return out


def _chunk_text(lines: list, first: int, last: int) -> str:
    """Lines first..last (1-based), to be parsed padded with `first - 1` newlines (see `_parse_chunk`)."""
    return "\n".join(lines[first - 1:last]) + ("\n" if last < len(lines) else "")


def _scan_end(lines: list, first: int, cands: list) -> int:
    """Where the chunk starting at line `first`, which does not parse on its own, really ends: the first line
    after it that starts a new top-level statement as Python's tokenizer reads the text (not inside a string,
    bracket or backslash continuation, a chunk candidate, not right after a decorator), or a column-0 `def`,
    `class` or `async def` line (with the decorators right above it) inside an unclosed bracket: no bracket can
    hold one, so the text is invalid whatever the bracket's intent, and the definition is read as code. A
    string is never closed early: what an unterminated string swallows stays in the failing chunk. Returns
    the next chunk's first line (len(lines) + 1 at the end); raises `_Unsure` where the scan cannot be
    certain (an f-string whose braces do not balance: Python 3.12 reads those differently)."""
    n = len(lines)
    depth = 0
    stack: list = []  # the open brackets, innermost last (only `depth` of them when the text is consistent)
    string = None  # the open string's delimiter (a triple quote, or a quote continued by a backslash)
    fstring: Optional[list] = None  # the open f-string's text so far
    cont = False  # the line before ended in a backslash (outside strings)
    logical_at = ""  # first character of the last logical line that started clean
    pending = 0  # first line of a run of column-0 decorators seen inside brackets
    is_cand = set(cands)
    for no in range(first, n + 1):
        line = lines[no - 1]
        c = line[:1]
        if no > first and string is None and not cont:
            if depth == 0:
                pending = 0
                if no in is_cand and logical_at != "@":
                    return no
            elif c and c not in " \t\x0c#":
                if _DEFINES.match(line):
                    return pending or no
                if c == "@":
                    pending = pending or no
                elif c not in ")]}\\":
                    pending = 0
        clean = string is None and depth == 0 and not cont
        cont = False
        pos = 0
        if string is not None:
            m = _STRING_END[string].match(line)
            if m is None:
                if fstring is not None:
                    fstring.append(line)
                if len(string) == 1 and not _ends_escaped(line):
                    _check_fstring(fstring, None)  # unterminated: ends at the line's end (an error)
                    string = fstring = None
                continue
            if fstring is not None:
                fstring.append(line[:m.end() - len(string)])
                _check_fstring(fstring, None)
            string = fstring = None
            pos = m.end()
        elif clean:
            stripped = line.lstrip(" \t\x0c")
            if stripped and stripped[0] != "#":
                logical_at = stripped[0] if len(stripped) == len(line) else " "
        while True:
            m = _QUOTES.search(line, pos)
            if m is None:
                break
            tok = m.group()
            pos = m.end()
            if tok == "#":
                break
            if tok in "([{":
                depth += 1
                stack.append(tok)
            elif tok in ")]}":
                if not stack or stack[-1] != _OPENER[tok]:
                    # A closing bracket that closes nothing, or the wrong bracket (`print(y[)`): Python's
                    # tokenizer stops here, so the text is invalid whatever follows. The chunk ends where
                    # the next top-level statement would start by the lines alone (see `_broken_end`).
                    return _broken_end(first, cands, n)
                stack.pop()
                depth -= 1
            elif tok == "\\":
                if pos == len(line):
                    cont = True
            else:
                is_f = _string_prefix(line, m.start())
                e = _STRING_END[tok].match(line, pos)
                if e is None:
                    if len(tok) == 3 or _ends_escaped(line[pos:]):
                        string = tok
                        fstring = [line[pos:]] if is_f else None
                    elif is_f:
                        _check_fstring([line[pos:]], None)
                    break
                if is_f:
                    _check_fstring([line[pos:e.end() - len(tok)]], None)
                pos = e.end()
    if depth and string is None:
        # A bracket is still open at the end of the file (`def oops(:`, `foo(`): the text is invalid whatever
        # the bracket was meant to hold, so the statements below it are read as statements.
        return _broken_end(first, cands, n)
    return n + 1


_OPENER = {")": "(", "]": "[", "}": "{"}


def _broken_end(first: int, cands: list, n: int) -> int:
    """Where a chunk ends in text that certainly does not parse because of a bracket (one closed by the wrong
    bracket, closed without being opened, or never closed): at the next chunk candidate after `first`, so a
    top-level typo loses only its own statement. The chunk up to there was parsed and failed (the caller's
    first try), so it is reported; the file's text is invalid, so no valid text is ever cut this way (the
    invariant `recover_chunks` relies on: some chunk fails if and only if the text does not parse)."""
    k = bisect.bisect_right(cands, first)
    return cands[k] if k < len(cands) else n + 1


def _ends_escaped(s: str) -> bool:
    """Does `s` end in an odd number of backslashes (a string continued on the next line)?"""
    return (len(s) - len(s.rstrip("\\"))) % 2 == 1


def _string_prefix(line: str, at: int) -> bool:
    """Is the string starting at `at` an f-string (or a t-string)? Only the f-string check depends on it: other
    prefixes end a string at the same quote."""
    j = at
    while j > 0 and (line[j - 1].isalnum() or line[j - 1] == "_"):
        j -= 1
    prefix = line[j:at].lower()
    return prefix in _PREFIXES and ("f" in prefix or "t" in prefix)


def _check_fstring(parts: Optional[list], tail: Optional[str]) -> None:
    """An f-string's text, as read before Python 3.12 (ending at the first matching quote): its replacement
    fields must balance, or Python 3.12+ (nested quotes, fields across lines) may read it differently."""
    if parts is None:
        return
    text = "\n".join(parts + ([tail] if tail is not None else []))
    depth = 0
    k, size = 0, len(text)
    while k < size:
        ch = text[k]
        if ch == "{":
            if depth == 0 and text.startswith("{{", k):
                k += 2
                continue
            depth += 1
        elif ch == "}":
            if depth == 0:
                if text.startswith("}}", k):
                    k += 2
                    continue
                raise _Unsure
            depth -= 1
        k += 1
    if depth:
        raise _Unsure


def derived_parses(state: FileState) -> dict:
    """The chunk parses of a version that parsed as a whole (`recover_chunks`'s cache), without parsing: a chunk of it
    runs from a candidate line that starts a top-level statement to the next such line, and parses on its own
    to exactly the statements that start in it (their tokens are the same; see `recover_chunks`)."""
    parsed = state.parsed
    if parsed is None:
        lines, body = state.lines, state.tree.body
        starts = {}
        for k, st in enumerate(body):
            first = first_line(st)
            if st.col_offset == 0 and first not in starts and (k == 0 or body[k - 1].end_lineno < first):
                starts[first] = k
        bounds = [c for c in _candidates(lines) if c in starts or c == 1]
        parsed = {}
        for a, b in zip(bounds, bounds[1:] + [len(lines) + 1]):
            k0 = starts.get(a, 0)
            k1 = starts.get(b, len(body)) if b <= len(lines) else len(body)
            if any(first_line(st) < a for st in body[k0:k1]):
                continue
            parsed[_chunk_text(lines, a, b - 1)] = (a, body[k0:k1])
        state.parsed = parsed
    return parsed


def recover_chunks(text: str, lines: list, previous: Optional[FileState], failed_hint=None) -> Optional[Chunks]:
    """Syntax-error recovery at top-level-statement granularity, a function of the text alone.

    The text is cut into chunks at `_candidates` lines; each chunk is parsed on its own, padded with newlines
    so positions are the file's. A chunk that parses is kept. A chunk that does not is extended by
    `_scan_end` to where Python's tokenizer really starts the next top-level statement (merging chunk
    candidates that lie inside a string, a bracket or a dangling decorator), parsed once more, and, if it
    still fails, skipped: one GS001 at its error, the rest of the file is analysed.

    Soundness. A kept chunk starts where the tokenizer is in its initial state (by induction: a chunk that
    parses ends with no bracket, string or continuation open; a skipped one ends where `_scan_end` says one
    starts), so its tokens are the file's tokens and its statements are the file's statements. The one
    exception is deliberate: a column-0 `def`/`class`/`async def` inside a bracket left open by a skipped
    chunk starts a new chunk. No bracket can hold a definition, so the file is invalid whatever the bracket
    was meant to hold; the tokens after it are code either way, and reading the definition as a definition is
    what the edit that completes the bracket will give. Strings get no such exception: what an unterminated
    triple-quoted string swallows (to the next matching quote, as Python pairs them) stays in the skipped
    chunk, so no finding comes from text Python reads as a string. Hence: some chunk fails if and only if the
    whole text does not parse, and when every chunk parses their statements are exactly `ast.parse(text)`'s
    (`tests/test_syntax_recovery.py` checks both). Where the scan cannot be certain (`_Unsure`) or a chunk
    cannot be parsed at all (nesting, encoding), this returns None and the caller falls back to analysing
    the longest prefix that parses (`parse_prefix`).

    `previous` (the file's last version) supplies parses of identical chunk texts (moved to the current line
    where lines were inserted above them), so a keystroke re-parses only the chunks it touched."""
    if "barry_as_FLUFL" in text or not lines:
        return None
    old = (previous.parsed if previous.broken else derived_parses(previous)) if previous is not None else {}
    old_errors = previous.errors if previous is not None and previous.errors is not None else {}
    memo = previous.digests if previous is not None else None
    parsed: dict = {}
    errors: dict = {}
    if failed_hint is not None:
        old_errors = dict(old_errors)
        old_errors[failed_hint[0]] = failed_hint[1]
    n = len(lines)
    cands = _candidates(lines)
    body: list = []
    failed: list = []

    def parse(first: int, last: int):
        chunk = _chunk_text(lines, first, last)
        hit = old.get(chunk) or parsed.get(chunk)
        if hit is not None:
            at, stmts = hit
            if at != first:
                delta = first - at
                moved = []
                for st in stmts:
                    new = shift_node(st, delta)
                    if memo is not None:
                        carry_digests(memo, st, new)
                    moved.append(new)
                stmts = moved
            parsed[chunk] = (first, stmts)
            return stmts
        key = (chunk, first)
        err = old_errors.get(key)
        if err is None:
            try:
                stmts = ast.parse("\n" * (first - 1) + chunk).body
            except SyntaxError as exc:
                err = (exc.msg, exc.lineno or first, exc.offset or 1)
            except (ValueError, RecursionError, MemoryError):
                raise _Unsure
            else:
                parsed[chunk] = (first, stmts)
                return stmts
        errors[key] = err
        return err

    try:
        k = 0
        start = 1
        while start <= n:
            while k < len(cands) and cands[k] <= start:
                k += 1
            nxt = cands[k] if k < len(cands) else n + 1
            got = parse(start, nxt - 1)
            if type(got) is tuple:
                end = _scan_end(lines, start, cands)
                if end != nxt:
                    got = parse(start, end - 1)
                if type(got) is tuple:
                    failed.append((start, end - 1) + got)
                else:
                    body.extend(got)
                nxt = end
            else:
                body.extend(got)
            start = nxt
    except _Unsure:
        return None
    return Chunks(ast.Module(body=body, type_ignores=[]), failed, parsed, errors)

