"""Python 3.12 syntax read by an older interpreter (`downgrade`).

gradsight parses with the `ast` of the Python it runs on. Code written for Python 3.12 may use syntax that 3.11
rejects: f-strings that reuse their own quotes, hold backslashes or comments, or continue a field on the next line
(PEP 701), and type parameters (`def first[T](xs: list[T])`, `class Box[T]:`, `type Vec = list[float]`, PEP 695).
Reporting such a file as a syntax error is a false alarm, and skipping the whole top-level statement around it (a
training function with one such f-string in a log line) is silence where it matters.

`downgrade` rewrites only those constructs, in the given regions of the file (the chunks that did not parse), into
text of exactly the same shape that 3.11 parses: every line keeps its length, so every position the analysis
reports is the file's own. An f-string becomes a plain string of its letters (its fields are not analysed; the
note says so); type parameters become spaces; a `type` statement becomes `pass`. A construct is rewritten only
where 3.11 rejects it and libcst's parser, in its Python 3.12 mode, accepts it: garbage typed mid-edit is never
turned into code. On Python 3.12 and later the interpreter's own parser reads all of this and `downgrade` is not
needed (`OLD_PYTHON` is false). Pure function of the text; imports libcst only when a candidate is found."""

from __future__ import annotations

import ast
import re
import sys
from typing import Optional

from .report import split_lines

OLD_PYTHON = sys.version_info < (3, 12)

_START = re.compile(r"#|(?:(?<![A-Za-z0-9_])([rRbBuUfF]{1,2}))?('''|\"\"\"|'|\")")
_PLAIN_END = {"'": re.compile(r"(?:[^'\\\n]|\\.)*'", re.S), '"': re.compile(r'(?:[^"\\\n]|\\.)*"', re.S),
              "'''": re.compile(r"(?:[^\\]|\\.)*?'''", re.S), '"""': re.compile(r'(?:[^\\]|\\.)*?"""', re.S)}
_PREFIXES = {"r", "u", "b", "f", "br", "rb", "fr", "rf"}
_HINT = re.compile(r"(?<![A-Za-z0-9_])[rR]?[fF][rR]?['\"]|^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+[ \t]*\[|"
                   r"^[ \t]*type[ \t]+[A-Za-z_]\w*[ \t]*[\[=]", re.M)
_GENERIC = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+[A-Za-z_]\w*[ \t]*(\[)", re.M)
_TYPE_STMT = re.compile(r"^([ \t]*)type[ \t]+[A-Za-z_]\w*[ \t]*(?:\[[^\]\n]*\])?[ \t]*=(?!=)", re.M)
_TYPE_PARAM = re.compile(r"\s*\*{0,2}[A-Za-z_]\w*\s*(?::[^=]+)?(?:=.+)?\s*", re.S)
_MESSAGES = ("f-string", "unterminated", "unexpected character after line continuation")
_MAX_DEPTH = 6  # f-strings nested in f-strings deeper than this are left alone


def downgrade(lines: list, failures: list) -> Optional[tuple]:
    """(new lines, notes) for `lines` (the file's lines), or None when nothing is rewritten. `failures` are the
    regions that did not parse: (first line, last line, the error's message, the error's line), 1-based. A region
    is looked at only when its error could come from Python 3.12 syntax (an f-string's error, an unterminated
    string, an error on a line with an f-string, a `def`/`class` with `[` or a `type` statement): a keystroke's
    ordinary syntax error costs nothing here. Each note is (line, column, what), `what` one of "f-string",
    "type-parameters", "type-statement"."""
    if not OLD_PYTHON:
        return None
    out = None
    notes: list = []
    for first, last, msg, at in failures:
        text = lines[at - 1] if 1 <= at <= len(lines) else ""
        if not (str(msg).startswith(_MESSAGES) or _HINT.search(text)):
            continue
        chunk = "\n".join(lines[first - 1:last])
        edits = _edits(chunk)
        if not edits:
            continue
        chars = list(chunk)
        for start, end, new, what in reversed(edits):
            chars[start:end] = new
        for start, end, new, what in edits:
            line = first + chunk.count("\n", 0, start)
            col = start - (chunk.rfind("\n", 0, start) + 1) + 1
            notes.append((line, col, what))
        if out is None:
            out = list(lines)
        out[first - 1:last] = "".join(chars).split("\n")
    return (out, notes) if out is not None else None


def parse_rewritten(text: str, exc: SyntaxError) -> Optional[ast.Module]:
    """The syntax tree of a whole file that did not parse (`exc`), read with its Python 3.12 syntax rewritten
    (`downgrade` over all of it), when that parses; else None. For files read whole, such as the modules another
    file imports (`workspace.scope_for`)."""
    if not OLD_PYTHON:
        return None
    lines = split_lines(text)
    down = downgrade(lines, [(1, len(lines), exc.msg or "", exc.lineno or 1)])
    if down is None:
        return None
    try:
        return ast.parse("\n".join(down[0]))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _edits(chunk: str) -> list:
    """(start, end, replacement of the same shape, what) for each construct of the chunk to rewrite."""
    edits: list = []
    strings: list = []  # (start, end) of every string literal, so that the statement patterns skip their insides
    cst = None
    for start, end, is_f in string_spans(chunk):
        strings.append((start, end))
        if not is_f:
            continue
        seg = chunk[start:end]
        body = seg[seg.index(seg[-1]) + 1:-1]  # after the prefix and opening quote (the quote character is seg[-1])
        if seg[-1] not in body and "\\" not in body and "#" not in body and "\n" not in body:
            continue  # none of what Python 3.12 added: as Python 3.11 reads it
        if _parses(seg):
            continue
        cst = cst or _libcst()
        if cst is None or not _cst_ok(cst, seg, expression=True):
            continue
        plain = _plain_string(seg)
        if plain is not None:
            edits.append((start, end, plain, "f-string"))

    def in_string(pos: int) -> bool:
        return any(a <= pos < b for a, b in strings)

    for m in _GENERIC.finditer(chunk):
        at = m.start(1)
        if in_string(at):
            continue
        end = _bracket_end(chunk, at)
        if end is None:
            continue
        inner = chunk[at + 1:end - 1]
        if not inner.isascii() or not all(_TYPE_PARAM.fullmatch(part) for part in _top_level_split(inner)):
            continue
        blank = "".join("\n" if c == "\n" else " " for c in chunk[at:end])
        edits.append((at, end, blank, "type-parameters"))
    for m in _TYPE_STMT.finditer(chunk):
        at = m.start() + len(m.group(1))
        if in_string(at):
            continue
        end = _logical_end(chunk, m.end())
        if end is None:
            continue
        text = chunk[at:end]
        if not text.isascii():
            continue
        cst = cst or _libcst()
        if cst is None or not _cst_ok(cst, text + "\n", expression=False):
            continue
        blank = "".join("\n" if c == "\n" else " " for c in text)
        edits.append((at, end, "pass" + blank[4:] if len(blank) >= 4 and "\n" not in blank[:4] else blank,
                      "type-statement"))
    edits.sort()
    # Overlaps cannot happen for well-formed text; drop any that do rather than corrupt the shape.
    kept: list = []
    for e in edits:
        if not kept or e[0] >= kept[-1][1]:
            kept.append(e)
    return kept


def _libcst():
    try:
        import libcst
    except Exception:  # noqa: BLE001 - without libcst the constructs stay syntax errors, as before
        return None
    return libcst


def _cst_ok(cst, text: str, expression: bool) -> bool:
    config = cst.PartialParserConfig(python_version="3.12")
    try:
        if expression:
            cst.parse_expression(text, config=config)
        else:
            cst.parse_module(text, config=config)
    except Exception:  # noqa: BLE001 - libcst raises ParserSyntaxError (and, rarely, others) on text it rejects
        return False
    return True


def _parses(seg: str) -> bool:
    try:
        ast.parse("(" + seg + "\n)", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _plain_string(seg: str) -> Optional[str]:
    """A plain string literal of exactly `seg`'s shape (lines and their lengths), made of its letters and digits
    (so that an edit inside the f-string still changes the parsed text)."""
    def keep(s: str) -> str:
        # Quotes and backslashes become `_`; every other character stays (a non-ASCII one too: the ast counts
        # columns in UTF-8 bytes, so a line keeps its byte length as well as its length).
        return "".join("_" if c in "\"'\\" else c for c in s)

    parts = seg.split("\n")
    if len(parts) == 1:
        if not seg[0].isascii() or not seg[-1].isascii():
            return None
        return '"' + keep(seg[1:-1]) + '"'
    if not (parts[0][:3].isascii() and parts[-1].isascii() and all(p[:2].isascii() for p in parts[1:-1])):
        return None  # a character the rewrite drops is not ASCII: the line's byte length would change
    # Across lines: a parenthesised concatenation of one string per line, `)` on the last line.
    out = []
    for k, part in enumerate(parts):
        if k == 0:
            out.append('("' + keep(part[3:]) + '"' if len(part) >= 3 else "(" + " " * (len(part) - 1))
        elif k == len(parts) - 1:
            out.append(" " * (len(part) - 1) + ")")
        else:
            out.append('"' + keep(part[2:]) + '"' if len(part) >= 2 else " " * len(part))
    return "\n".join(out)


def string_spans(text: str):
    """(start, end, is an f-string) of each string literal in `text`, read as Python 3.12 reads it; comments are
    skipped. Stops at the first string that does not end (the rest cannot be read with certainty)."""
    i = 0
    while True:
        m = _START.search(text, i)
        if m is None:
            return
        if m.group(0) == "#":
            k = text.find("\n", m.end())
            if k < 0:
                return
            i = k
            continue
        prefix = (m.group(1) or "").lower()
        if prefix and prefix not in _PREFIXES:
            i = m.end()  # an identifier ending in those letters before a quote: not a prefix
            continue
        if "f" in prefix:
            end = _fstring_end(text, m.end(), m.group(2), "r" in prefix, 0)
        else:
            end = _plain_string_end(text, m.start(2))
        if end is None:
            return
        yield m.start(), end, "f" in prefix
        i = end


def _fstring_end(text: str, j: int, quote: str, raw: bool, depth: int) -> Optional[int]:
    """Where the f-string whose text starts at `j` (after its opening quote) ends, as Python 3.12 reads it."""
    if depth > _MAX_DEPTH:
        return None
    n = len(text)
    triple = len(quote) == 3
    while j < n:
        ch = text[j]
        if ch == "\\":
            if not raw and text.startswith("\\N{", j):
                k = text.find("}", j)
                if k < 0:
                    return None
                j = k + 1
                continue
            j += 2
            continue
        if text.startswith(quote, j):
            return j + len(quote)
        if ch == "\n" and not triple:
            return None
        if ch == "{":
            if text.startswith("{{", j):
                j += 2
                continue
            j = _field_end(text, j + 1, depth)
            if j is None:
                return None
            continue
        if ch == "}":
            if text.startswith("}}", j):
                j += 2
                continue
            return None
        j += 1
    return None


def _field_end(text: str, j: int, depth: int) -> Optional[int]:
    """Where a replacement field whose expression starts at `j` ends (after its `}`)."""
    n = len(text)
    brackets = 0
    while j < n:
        ch = text[j]
        if ch in "([{":
            brackets += 1
        elif ch in ")]":
            brackets -= 1
            if brackets < 0:
                return None
        elif ch == "}":
            if brackets == 0:
                return j + 1
            brackets -= 1
        elif ch == "#":
            k = text.find("\n", j)
            if k < 0:
                return None
            j = k
            continue
        elif ch in "'\"":
            k = j
            while k > 0 and text[k - 1].isalpha():
                k -= 1
            prefix = text[k:j].lower()
            if "f" in prefix and prefix in _PREFIXES:
                quote = ch * 3 if text.startswith(ch * 3, j) else ch
                end = _fstring_end(text, j + len(quote), quote, "r" in prefix, depth + 1)
            else:
                end = _plain_string_end(text, j)
            if end is None:
                return None
            j = end
            continue
        elif brackets == 0 and ch == "!" and text[j + 1:j + 2] != "=":
            j += 2  # a conversion (`!r`); a format spec or the closing brace follows
            continue
        elif brackets == 0 and ch == ":":
            return _spec_end(text, j + 1, depth)
        j += 1
    return None


def _spec_end(text: str, j: int, depth: int) -> Optional[int]:
    """Where a format spec (after a field's `:`) ends, after the field's `}`; it may hold nested fields."""
    n = len(text)
    while j < n:
        ch = text[j]
        if ch == "{":
            j = _field_end(text, j + 1, depth + 1)
            if j is None:
                return None
            continue
        if ch == "}":
            return j + 1
        j += 1
    return None


def _plain_string_end(text: str, j: int) -> Optional[int]:
    """After the string literal (not an f-string) whose opening quote is at `j`; None if it does not end."""
    quote = text[j] * 3 if text.startswith(text[j] * 3, j) else text[j]
    found = _PLAIN_END[quote].match(text, j + len(quote))
    return found.end() if found else None


def _bracket_end(text: str, at: int) -> Optional[int]:
    """After the `]` matching the `[` at `at` (strings inside skipped)."""
    depth = 0
    j = at
    n = len(text)
    while j < n:
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1 if ch == "]" else None
        elif ch in "'\"":
            j = _plain_string_end(text, j)
            if j is None:
                return None
            continue
        elif ch == "#":
            return None
        j += 1
    return None


def _logical_end(text: str, j: int) -> Optional[int]:
    """Where the logical line that goes on at `j` ends (before its newline), brackets and strings followed."""
    depth = 0
    n = len(text)
    while j < n:
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch in "'\"":
            j = _plain_string_end(text, j)
            if j is None:
                return None
            continue
        elif ch == "#":
            k = text.find("\n", j)
            return (k if k >= 0 else n) if depth == 0 else None
        elif ch == "\n" and depth == 0 and not text.endswith("\\", 0, j):
            return j
        j += 1
    return n if depth == 0 else None


def _top_level_split(inner: str) -> list:
    """`inner` split at its commas outside brackets."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(inner):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:k])
            start = k + 1
    tail = inner[start:]
    if tail.strip() or not parts:
        parts.append(tail)
    return parts
