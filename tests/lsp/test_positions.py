"""positions.py: engine (1-based line, code-point column) <-> LSP (0-based line, UTF-16/8/32 column)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from gradsight.lsp.positions import UTF8, UTF16, UTF32, LineIndex, code_points_before, normalize_encoding, units_before


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


@pytest.mark.parametrize(
    ("line", "cp", "utf16", "utf8", "utf32"),
    [
        ("abc", 2, 2, 2, 2),
        ("x = '😀' + y", 7, 8, 10, 7),  # emoji: 2 UTF-16 units, 4 UTF-8 bytes
        ("名前 = t", 3, 3, 7, 3),  # CJK: 1 UTF-16 unit, 3 UTF-8 bytes
        ("e\u0301 = 1", 2, 2, 3, 2),  # combining acute accent is its own code point
        ("\tx = 1", 1, 1, 1, 1),  # a tab is one unit everywhere
        ("𝔸𝔹 = a", 2, 4, 8, 2),  # mathematical letters outside the BMP
    ],
)
def test_units_before(line, cp, utf16, utf8, utf32):
    assert units_before(line, cp, UTF16) == utf16
    assert units_before(line, cp, UTF8) == utf8
    assert units_before(line, cp, UTF32) == utf32
    # and back again
    assert code_points_before(line, utf16, UTF16) == cp
    assert code_points_before(line, utf8, UTF8) == cp
    assert code_points_before(line, utf32, UTF32) == cp


def test_inside_a_surrogate_pair_rounds_down():
    line = "a😀b"
    assert code_points_before(line, 2, UTF16) == 1  # between the two halves of 😀
    assert code_points_before(line, 3, UTF16) == 2
    assert code_points_before(line, 2, UTF8) == 1  # inside the 4 UTF-8 bytes


def test_emoji_finding_round_trip():
    text = "s = '😀😀'; loss = s.numpy()\n"
    index = LineIndex(text)
    column = text.index("loss") + 1  # 1-based code points
    p = index.to_lsp(1, column)
    assert p == pos(0, column - 1 + 2)  # two emoji, one extra unit each
    assert index.from_lsp(p) == (1, column)


def test_cjk_and_combining_characters():
    text = "名前 = torch.ones(1)\ncafe\u0301 = 名前.sum()\n"
    index = LineIndex(text)
    assert index.to_lsp(2, 8) == pos(1, 7)
    assert LineIndex(text, UTF8).to_lsp(2, 8) == pos(1, 8)  # é is 'e' + U+0301 (2 bytes)
    assert LineIndex(text, UTF8).to_lsp(2, 11) == pos(1, 15)  # 名前 are 3 bytes each
    assert index.from_lsp(pos(1, 10)) == (2, 11)


def test_crlf_and_lone_cr_end_lines():
    text = "a = 1\r\nb = 2\rc = 3\nd"
    index = LineIndex(text)
    assert index.line_count == 4
    assert [index.line_text(i) for i in range(4)] == ["a = 1", "b = 2", "c = 3", "d"]
    assert index.line_terminator(0) == "\r\n"
    assert index.to_lsp(3, 5) == pos(2, 4)
    # a column past the end of a CRLF line stops before the \r
    assert index.to_lsp(1, 99) == pos(0, 5)
    assert index.from_lsp(pos(0, 99)) == (1, 6)


def test_unicode_line_separators_do_not_end_lines():
    text = "s = 'a\u2028b'\x0c\nt = 1\n"
    index = LineIndex(text)
    assert index.line_count == 3
    assert index.to_lsp(2, 1) == pos(1, 0)


def test_tabs_are_one_column():
    index = LineIndex("\tif x:\n\t\ty = x.numpy()\n")
    assert index.to_lsp(2, 7) == pos(1, 6)


def test_out_of_range_is_clamped_or_none():
    index = LineIndex("ab\ncd")
    assert index.to_lsp(0, 1) == pos(0, 0)
    assert index.to_lsp(99, 1) == pos(1, 2)  # past the end: the end of the last line
    assert index.range_to_lsp(2, 3, 1, 1).end == pos(1, 2)  # an inverted range collapses to its start
    assert index.from_lsp(pos(5, 0)) is None
    assert index.from_lsp(pos(1, 50)) == (2, 3)


def test_offsets_round_trip_with_crlf_and_emoji():
    text = "a😀\r\nb\r\n"
    index = LineIndex(text)
    assert index.position_of_offset(2) == pos(0, 3)
    assert index.position_of_offset(3) == pos(0, 3)  # between \r and \n: still the end of line 0
    assert index.position_of_offset(4) == pos(1, 0)
    assert index.end_position() == pos(2, 0)
    assert index.offset_of(2, 2) == 5
    assert index.offset_of(9, 9) == len(text)


def test_empty_text():
    index = LineIndex("")
    assert index.line_count == 1
    assert index.to_lsp(1, 1) == pos(0, 0)
    assert index.from_lsp(pos(0, 0)) == (1, 1)


def test_normalize_encoding():
    assert normalize_encoding(types.PositionEncodingKind.Utf8) == UTF8
    assert normalize_encoding("utf-32") == UTF32
    assert normalize_encoding(None) == UTF16
    assert normalize_encoding("latin-1") == UTF16
