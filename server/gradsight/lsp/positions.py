"""The one place that converts positions between the engine and the editor.

The engine (and `gradsight.findings`) speaks 1-based lines and 1-based *code-point* columns.
LSP speaks 0-based lines and 0-based columns counted in the negotiated position encoding:
UTF-16 code units by default, or UTF-8 bytes / UTF-32 code points when client and server agree on
it during `initialize` (pygls picks the client's first preference, e.g. Neovim 0.11 asks for UTF-8
and Emacs 29 for UTF-32). Every other module goes through `LineIndex`; none counts columns itself.

Lines follow the LSP definition: they end at `\\n`, `\\r\\n` or a lone `\\r` (Python's tokenizer
agrees on all three). Characters such as U+2028 or form feed do *not* end a line here, unlike
`str.splitlines`.

Out-of-range input is clamped, never an exception: a finding past the end of a stale document lands
on the last line, a column past the end of a line lands at its end, and a UTF-16 column that falls
inside a surrogate pair rounds down to the start of that character. `from_lsp` alone reports a line
that does not exist (None), because a request at such a position must be answered with null.
"""

from __future__ import annotations

import re
from itertools import accumulate

from lsprotocol import types

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"

_LINE_END = re.compile(r"\r\n|\r|\n")


def normalize_encoding(encoding: object) -> str:
    """Map an LSP `PositionEncodingKind` (or its string value, or None) to UTF8/UTF16/UTF32."""
    value = getattr(encoding, "value", encoding)
    if value in (UTF8, UTF32):
        return value  # type: ignore[return-value]
    return UTF16


def _units(ch: str, encoding: str) -> int:
    """Width of one code point in the given encoding's units."""
    if encoding == UTF32:
        return 1
    cp = ord(ch)
    if encoding == UTF16:
        return 2 if cp > 0xFFFF else 1
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        return 3
    return 4


def units_before(line: str, code_points: int, encoding: str = UTF16) -> int:
    """How many encoding units the first `code_points` code points of `line` take."""
    code_points = max(0, min(code_points, len(line)))
    if encoding == UTF32 or line.isascii():
        return code_points
    return sum(_units(ch, encoding) for ch in line[:code_points])


def code_points_before(line: str, units: int, encoding: str = UTF16) -> int:
    """The code-point index of the character at `units` encoding units into `line`.

    A position inside a multi-unit character rounds down to that character's start; a position past
    the end of the line gives the line's length.
    """
    units = max(0, units)
    if encoding == UTF32 or line.isascii():
        return min(units, len(line))
    seen = 0
    for index, ch in enumerate(line):
        width = _units(ch, encoding)
        if seen + width > units:
            return index
        seen += width
    return len(line)


class LineIndex:
    """Line starts of one text, for converting between engine and LSP positions."""

    __slots__ = ("text", "encoding", "_starts", "_ends")

    def __init__(self, text: str, encoding: object = UTF16) -> None:
        self.text = text
        self.encoding = normalize_encoding(encoding)
        if "\r" not in text:
            # The common case, without a regex match object per line (3-4x faster on a 5,000-line file).
            starts = list(accumulate([len(line) + 1 for line in text.split("\n")], initial=0))
            starts.pop()
            ends = [start - 1 for start in starts[1:]]
            ends.append(len(text))
        else:
            starts = [0]
            ends = []
            for match in _LINE_END.finditer(text):
                ends.append(match.start())
                starts.append(match.end())
            ends.append(len(text))
        self._starts = starts
        self._ends = ends

    @property
    def line_count(self) -> int:
        """Number of LSP lines (a text ending in a newline has an empty last line)."""
        return len(self._starts)

    def line_text(self, line0: int) -> str:
        """The text of 0-based line `line0` without its line terminator ('' when out of range)."""
        if not 0 <= line0 < len(self._starts):
            return ""
        return self.text[self._starts[line0]:self._ends[line0]]

    def line_terminator(self, line0: int) -> str:
        """The terminator of 0-based line `line0` ('' for the last line)."""
        if not 0 <= line0 < len(self._starts) - 1:
            return ""
        return self.text[self._ends[line0]:self._starts[line0 + 1]]

    # -- engine (1-based line, 1-based code-point column) -> LSP ---------------------------------

    def to_lsp(self, line: int, column: int) -> types.Position:
        """Convert an engine position; clamps lines and columns that are out of range."""
        if line < 1:
            return types.Position(line=0, character=0)
        if line > len(self._starts):
            last = len(self._starts) - 1
            return types.Position(line=last, character=units_before(self.line_text(last), 1 << 30, self.encoding))
        text = self.line_text(line - 1)
        return types.Position(line=line - 1, character=units_before(text, column - 1, self.encoding))

    def range_to_lsp(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        start = self.to_lsp(line, column)
        end = self.to_lsp(end_line, end_column)
        if (end.line, end.character) < (start.line, start.character):
            end = start
        return types.Range(start=start, end=end)

    # -- LSP -> engine -----------------------------------------------------------------------------

    def from_lsp(self, position: types.Position) -> tuple[int, int] | None:
        """Convert an LSP position to (line, column), 1-based; None when the line does not exist.

        A character past the end of its line is clamped to the line's end, as LSP asks.
        """
        if position.line < 0 or position.character < 0 or position.line >= len(self._starts):
            return None
        text = self.line_text(position.line)
        return position.line + 1, code_points_before(text, position.character, self.encoding) + 1

    # -- offsets (code-point index into `text`) ------------------------------------------------

    def offset_of(self, line: int, column: int) -> int:
        """Code-point offset of an engine position, clamped into the text."""
        line = max(1, min(line, len(self._starts)))
        start, end = self._starts[line - 1], self._ends[line - 1]
        return min(start + max(column - 1, 0), end)

    def position_of_offset(self, offset: int) -> types.Position:
        """LSP position of a code-point offset into `text` (clamped)."""
        offset = max(0, min(offset, len(self.text)))
        line0 = _bisect_right(self._starts, offset) - 1
        # An offset between '\r' and '\n' belongs to the end of the line.
        column = min(offset, self._ends[line0]) - self._starts[line0]
        return types.Position(line=line0, character=units_before(self.line_text(line0), column, self.encoding))

    def end_position(self) -> types.Position:
        return self.position_of_offset(len(self.text))


def _bisect_right(values: list[int], x: int) -> int:
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < values[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


class IndexCache:
    """The `LineIndex`es of the last few texts asked about, by document.

    Building an index walks the whole text (a couple of milliseconds for a 5,000-line file), and every
    hover, inlay-hint or diagnostic request needs one for the same unchanged text. Entries are reused only
    for an equal text in the same encoding; a handful are kept, never one per open document.
    """

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._items: dict[str, LineIndex] = {}  # insertion order = least recently used first

    def get(self, key: str, text: str, encoding: object = UTF16) -> LineIndex:
        encoding = normalize_encoding(encoding)
        index = self._items.pop(key, None)
        if index is None or index.encoding != encoding or not (index.text is text or index.text == text):
            index = LineIndex(text, encoding)
        self._items[key] = index
        while len(self._items) > self.size:
            del self._items[next(iter(self._items))]
        return index

    def forget(self, key: str) -> None:
        self._items.pop(key, None)

    def clear(self) -> None:
        self._items.clear()
