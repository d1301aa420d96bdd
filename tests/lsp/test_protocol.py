"""Unit tests of the server's document model (`documents.LspTextDocument`/`LspWorkspace`) and of its
JSON-RPC layer (`protocol.serve` framing, `GradsightProtocol` validation), without a server process.

The end-to-end versions (a real server on stdio fed malformed bytes) are in tests/reliability.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import threading

import pytest
from lsprotocol import types

from gradsight.lsp import protocol as gp
from gradsight.lsp.documents import LspTextDocument, LspWorkspace
from gradsight.lsp.server import create_server

@contextlib.contextmanager
def gradsight_log():
    """The records of the gradsight logger (which stops propagating once a server is initialised)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("gradsight")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


# -- the document model ------------------------------------------------------------------------------


def doc(text: str, encoding: str = "utf-16") -> LspTextDocument:
    return LspTextDocument("file:///t.py", source=text, version=1, language_id="python", encoding=encoding)


def edit(document: LspTextDocument, start: tuple[int, int], end: tuple[int, int], text: str) -> str:
    document.apply_change(types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(*start), end=types.Position(*end)), text=text))
    return document.source


@pytest.mark.parametrize("sep", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"],
                         ids=lambda c: f"U+{ord(c):04X}")
def test_only_lsp_line_ends_split_lines(sep):
    d = doc(f"a{sep}b\ncd\n")
    assert d.lines == (f"a{sep}b\n", "cd\n", "")
    assert edit(d, (1, 0), (1, 0), "X") == f"a{sep}b\nXcd\n"


def test_crlf_and_lone_cr_are_line_ends():
    d = doc("a\r\nb\rc\nd")
    assert d.lines == ("a\r\n", "b\r", "c\n", "d")
    assert edit(d, (2, 1), (3, 0), "") == "a\r\nb\rcd"


@pytest.mark.parametrize("text, start, end, new, want", [
    # a character past the end of its line means the end of that line, before its line break
    ("ab\ncd\n", (0, 99), (0, 99), "!", "ab!\ncd\n"),
    ("ab\r\ncd\r\n", (0, 3), (0, 3), "!", "ab!\r\ncd\r\n"),
    ("ab\rcd", (0, 2 ** 31 - 1), (0, 2 ** 31 - 1), "!", "ab!\rcd"),
    ("ab\ncd", (1, 99), (1, 99), "!", "ab\ncd!"),  # the last line, no final newline
    # a line past the end of the document means the end of the document
    ("ab\ncd", (7, 3), (9, 0), "!", "ab\ncd!"),
    ("ab\ncd\n", (2, 0), (2, 0), "!", "ab\ncd\n!"),
    ("ab\ncd\n", (1, 1), (40, 0), "", "ab\nc"),
    # a reversed range is the range between its two positions
    ("abcd", (0, 3), (0, 1), "", "ad"),
    # the empty document
    ("", (0, 0), (0, 0), "x", "x"),
    ("", (5, 5), (5, 5), "x", "x"),
])
def test_out_of_range_positions_are_clamped_as_lsp_says(text, start, end, new, want):
    assert edit(doc(text), start, end, new) == want


def test_utf16_columns_with_emoji_cjk_and_combining_characters():
    line = "s = '😀日本e\u0301👩\u200d👧' # x"
    d = doc(f"{line}\nnext\n")
    # UTF-16: 's', ' ', '=', ' ', "'" are 5 units, 😀 2, 日 1, 本 1, e 1, U+0301 1, 👩 2, ZWJ 1, 👧 2
    assert edit(d, (0, 7), (0, 9), "") == "s = '😀e\u0301👩\u200d👧' # x\nnext\n"  # removes 日本
    assert edit(d, (0, 5), (0, 7), "🚀") == "s = '🚀e\u0301👩\u200d👧' # x\nnext\n"
    # inside a surrogate pair: the start of that character (as positions.LineIndex rounds)
    assert edit(d, (0, 6), (0, 6), "|") == "s = '|🚀e\u0301👩\u200d👧' # x\nnext\n"


@pytest.mark.parametrize("encoding, column", [("utf-8", 5 + 4 + 3), ("utf-32", 5 + 1 + 1), ("utf-16", 5 + 2 + 1)])
def test_negotiated_encodings(encoding, column):
    d = doc("s = '😀日x'\n", encoding)
    assert edit(d, (0, column), (0, column), "|") == "s = '😀日|x'\n"


def test_the_document_matches_the_clients_model_under_random_edits():
    import random
    import sys
    import pathlib

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reliability"))
    import gs_lsp

    rng = random.Random(7)
    pieces = ["x", "\n", "\r\n", "\r", "😀", "日本", "e\u0301", "\x0c", "\u2028", "\t", ""]
    text = "import torch\r\n# 😀\x0c\u2028 日本\nx = 1\ry = 2"
    model, d = gs_lsp.LspText(text), doc(text)
    for _ in range(2000):
        valid = model.valid_positions()
        a, b = rng.choice(valid), rng.choice(valid)
        if rng.random() < 0.2:
            # past a line's end or the document's (not inside a surrogate pair: the spec leaves that open)
            b = rng.choice([{"line": b["line"], "character": 10 ** 6},
                            {"line": model.line_count() + rng.choice([0, 3]), "character": rng.choice([0, 7])}])
        a, b = sorted([a, b], key=lambda p: (p["line"], p["character"]))
        new = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 3)))
        change = {"range": {"start": a, "end": b}, "text": new}
        model.apply(change)
        edit(d, (a["line"], a["character"]), (b["line"], b["character"]), new)
        assert d.source == model.text, change


def test_workspace_ignores_changes_to_documents_that_are_not_open():
    ws = LspWorkspace("file:///w", types.TextDocumentSyncKind.Incremental, [], types.PositionEncodingKind.Utf16)
    with gradsight_log() as records:
        ws.update_text_document(types.VersionedTextDocumentIdentifier(uri="file:///w/nope.py", version=2),
                                types.TextDocumentContentChangeWholeDocument(text="x = 1\n"))
        ws.remove_text_document("file:///w/nope.py")
        ws.update_notebook_document(types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri="file:///w/nb.ipynb"),
            change=types.NotebookDocumentChangeEvent()))
    assert "file:///w/nope.py" not in ws.text_documents
    messages = " ".join(r.getMessage() for r in records)
    assert "nope.py, which is not open" in messages and "nb.ipynb, which is not open" in messages
    ws.put_text_document(types.TextDocumentItem(uri="file:///w/a.py", language_id="python", version=1, text="a\n"))
    assert isinstance(ws.get_text_document("file:///w/a.py"), LspTextDocument)


# -- framing -------------------------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def receive(self, body: bytes) -> None:
        self.bodies.append(body)


def frames(data: bytes) -> list[bytes]:
    recorder = Recorder()
    reader = gp.StdinReader(io.BufferedReader(io.BytesIO(data)), None)
    asyncio.run(gp.serve(threading.Event(), reader, recorder))  # type: ignore[arg-type]
    return recorder.bodies


def framed(body: bytes, header: bytes = b"Content-Length") -> bytes:
    return header + b": %d\r\n\r\n" % len(body) + body


GOOD = b'{"jsonrpc":"2.0","id":1,"method":"shutdown"}'


@pytest.mark.parametrize("junk", [
    b"Content-Length: 99999999999999999999999\r\n\r\n\r\n",
    b"Content-Length: %d\r\n\r\n" % (gp.MAX_CONTENT_LENGTH + 1),
    b"Content-Length: -5\r\n\r\n\r\n",
    b"Content-Length: abc\r\n\r\n{}\r\n",
    b"Content-Length: 1e3\r\n\r\n",
    b"Content-Length: \xd9\xa3\r\n\r\n",  # an Arabic-Indic digit: not ASCII
    b"Content-Length:\r\n\r\n",
    b"hello world\r\n",
    b"\r\n\r\n",
    b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",
    b"x" * (3 * gp.MAX_HEADER_LINE) + b"\r\n\r\n",
    b"x" * (gp.MAX_HEADER_LINE - 1) + b"\r\n\r\n",  # the line's "\n" is read on its own
])
def test_bad_headers_are_skipped_and_the_next_message_is_read(junk):
    assert frames(junk + framed(GOOD) + junk + framed(GOOD)) == [GOOD, GOOD]


def test_header_variants_and_exact_bodies():
    body = '{"jsonrpc":"2.0","method":"x","params":"😀\r\n"}'.encode()
    data = (framed(body, b"content-length") + b"Content-Length:%d\n\n" % len(body) + body
            + b"Content-Type: x\r\nContent-Length: 2\r\n\r\n{}" + b"Content-Length: 0\r\n\r\n")
    assert frames(data) == [body, body, b"{}", b""]


def test_a_truncated_message_ends_the_input_quietly():
    assert frames(framed(GOOD) + b"Content-Length: 100\r\n\r\n{") == [GOOD]


def test_a_large_body_arrives_whole():
    body = b'{"jsonrpc":"2.0","method":"x","params":"' + b"a" * (3 * gp.READ_CHUNK) + b'"}'
    assert frames(framed(body)) == [body]


# -- validation and answers ----------------------------------------------------------------------------


@pytest.fixture
def server():
    logger = logging.getLogger("gradsight")
    handlers, propagate, level = list(logger.handlers), logger.propagate, logger.level
    ls = create_server()
    sent: list[dict] = []
    ls.protocol._send_data = lambda data: sent.append(json.loads(json.dumps(data, default=ls.protocol._serialize_message)))
    ls.sent = sent
    yield ls
    ls.session.shutdown()
    # `initialize` points the gradsight logger at the client; put it back for the tests that follow.
    logger.handlers[:], logger.propagate = handlers, propagate
    logger.setLevel(level)


def send(ls, message) -> list[dict]:
    before = len(ls.sent)
    ls.protocol.receive(message if isinstance(message, bytes) else json.dumps(message).encode())
    return ls.sent[before:]


def initialize(ls, tmp_path) -> None:
    async def run():
        send(ls, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
        for _ in range(20):
            await asyncio.sleep(0.01)

    asyncio.run(run())


@pytest.mark.parametrize("body, code", [
    (b"xxxx", gp.PARSE_ERROR),
    (b"", gp.PARSE_ERROR),
    (b"\xff\xfe\x00\x01", gp.PARSE_ERROR),
    (b"[" * 100_000, gp.PARSE_ERROR),
    (b'{"jsonrpc": "2.0", "id": 1', gp.PARSE_ERROR),
    (b"null", gp.INVALID_REQUEST),
    (b"[1,2,3]", gp.INVALID_REQUEST),
    (b'"str"', gp.INVALID_REQUEST),
    (b"{}", gp.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0"}', gp.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":[1],"method":"shutdown"}', gp.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":true,"method":"shutdown"}', gp.INVALID_REQUEST),
])
def test_unreadable_messages_are_answered_with_id_null(server, body, code):
    answers = send(server, body)
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, code)], answers


def test_requests_with_bad_envelopes_keep_their_id(server, tmp_path):
    initialize(server, tmp_path)
    answers = send(server, {"jsonrpc": "1.0", "id": 7, "method": "shutdown"}) + \
        send(server, {"jsonrpc": "2.0", "id": "x", "method": 5})
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(7, gp.INVALID_REQUEST), ("x", gp.INVALID_REQUEST)]


@pytest.mark.parametrize("params, problem", [
    (None, "required field missing @ $.params"),
    ({"textDocument": {"uri": "file:///x.py"}}, "required field missing @ $.params.position"),
    ({"textDocument": {"uri": "file:///x.py"}, "position": {"line": -1, "character": 0}},
     "Position.line should be in range"),
    ({"textDocument": "x", "position": {"line": 0, "character": 0}}, "@ $.params.text_document"),
])
def test_requests_with_invalid_params_get_invalid_params(server, tmp_path, params, problem):
    initialize(server, tmp_path)
    message = {"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover"}
    if params is not None:
        message["params"] = params
    [answer] = send(server, message)
    assert answer["id"] == 5 and answer["error"]["code"] == gp.INVALID_PARAMS
    assert "Invalid params for textDocument/hover" in answer["error"]["message"]
    assert problem in answer["error"]["message"]


def test_notifications_with_invalid_params_are_logged_not_answered_or_shown(server, tmp_path):
    initialize(server, tmp_path)
    with gradsight_log() as records:
        answers = send(server, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": "file:///x.py", "version": 2},
            "contentChanges": [{"range": {"start": {"line": -1, "character": 0},
                                          "end": {"line": 0, "character": 0}}, "text": "x"}]}})
        answers += send(server, {"jsonrpc": "1.0", "method": "textDocument/didOpen", "params": {}})
    assert answers == []
    assert any("ignored notification textDocument/didChange" in r.getMessage() and r.levelno == logging.WARNING
               for r in records)
    assert not any(n for n in server.sent if n.get("method") == "window/showMessage")


def test_before_initialize_and_after_shutdown(server, tmp_path):
    [early] = send(server, {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover",
                            "params": {"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}}})
    assert early["error"]["code"] == gp.SERVER_NOT_INITIALIZED
    assert send(server, {"jsonrpc": "2.0", "method": "initialized", "params": {}}) == []
    initialize(server, tmp_path)
    assert isinstance(server.workspace, LspWorkspace)
    server.protocol._shutdown = True
    [late] = send(server, {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
                           "params": {"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}}})
    assert late["error"]["code"] == gp.INVALID_REQUEST


def test_unknown_methods_without_params(server, tmp_path):
    initialize(server, tmp_path)
    answers = send(server, {"jsonrpc": "2.0", "id": 3, "method": "gradsight/nope"})
    answers += send(server, {"jsonrpc": "2.0", "method": "gradsight/nope"})
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(3, -32601)]


def test_an_unreadable_response_fails_the_request_waiting_for_it(server, tmp_path):
    initialize(server, tmp_path)

    async def run():
        future = server.protocol.send_request_async("workspace/configuration", types.ConfigurationParams(items=[]))
        request = server.sent[-1]
        send(server, {"jsonrpc": "2.0", "id": request["id"], "error": "not an object"})
        with pytest.raises(Exception, match="Invalid error response"):
            await asyncio.wait_for(future, 5)

    asyncio.run(run())


def test_server_errors_are_logged_never_shown(server):
    from pygls.exceptions import FeatureNotificationError

    with gradsight_log() as records:
        server.report_server_error(KeyError("file:///x.py"), FeatureNotificationError)
    assert server.sent == []
    assert any("file:///x.py" in r.getMessage() for r in records)
