"""The language server under abuse: thousands of random but well-formed requests and notifications,
malformed JSON-RPC written straight to its stdin, bad settings, unknown documents and methods.

The server must answer every request (an error response is fine), never die, log no internal error,
exit cleanly on shutdown/exit, and at every checkpoint hold exactly the client's text: its diagnostics
equal what `analyze_source` finds in the client's copy (positions converted to UTF-16), and every range
it returns lies inside the client's text. Documents mix emoji (surrogate pairs in UTF-16), CJK, combining
characters, ZWJ sequences, tabs and "\\n", "\\r\\n" and "\\r" line endings.

Edits at out-of-range positions are sent too. Lines past the end and characters past a line's end have a
meaning (the end of the document, the end of the line) and the server's copy must follow them; where the
LSP specification leaves the result open (a position inside a surrogate pair) the client re-sends the full
text before comparing. Skipped if `python -m gradsight lsp --help` fails (the server is still being built).
"""

from __future__ import annotations

import asyncio
import pathlib

import pytest

import gs_lsp
from gs_fuzz import scale

OK, WHY = gs_lsp.server_available()
pytestmark = pytest.mark.skipif(not OK, reason=WHY or "language server unavailable")


def run_session(tmp_path: pathlib.Path, seed: int, n_ops: int, **kwargs) -> gs_lsp.AbuseSession:
    root = tmp_path / "ws"
    root.mkdir()
    session = gs_lsp.AbuseSession(root, seed, str(tmp_path / "server-stderr.txt"), **kwargs)
    stats = asyncio.run(asyncio.wait_for(session.run(n_ops, checkpoint_every=400), 600))
    print(stats)
    return session


def report(session: gs_lsp.AbuseSession) -> str:
    return "\n".join(session.failures[:15]) + "\n--- server stderr (tail) ---\n" + session.client.stderr_text()[-3000:]


def test_abuse_pull_diagnostics(tmp_path):
    session = run_session(tmp_path, seed=1122, n_ops=int(2500 * scale()))
    assert not session.failures, report(session)
    # Malformed traffic and changes to documents that are not open go to the log, never to error pop-ups.
    assert session.stats["error popups (window/showMessage type 1)"] == 0, session.client.shown_messages()[:5]
    assert session.client.malformed_responses == []
    assert session.stats["messages sent"] >= 2000 * min(1.0, scale())
    assert session.stats["checkpoint"] >= 3
    for what in ("didChange", "didChange(out of range)", "textDocument/hover", "textDocument/inlayHint",
                 "textDocument/codeAction", "malformed bytes", "didChangeConfiguration"):
        assert session.stats.get(what, 0) > 0, what


def test_abuse_push_diagnostics(tmp_path):
    """The same traffic for a client without pull diagnostics: debounced, versioned publishDiagnostics."""
    session = run_session(tmp_path, seed=2211, n_ops=int(800 * scale()), pull=False)
    assert not session.failures, report(session)


def test_the_comparison_catches_a_diverged_document(tmp_path):
    """The checker itself: a change the client does not record must be reported at the checkpoint."""
    root = tmp_path / "ws"
    root.mkdir()

    async def run() -> list[str]:
        session = gs_lsp.AbuseSession(root, 1, str(tmp_path / "server-stderr.txt"))
        session.settle_s = 1.0
        await session.client.start()
        try:
            await gs_lsp.initialize(session.client, root)
            session.op_open()
            uri = next(iter(session.docs))
            session.versions[uri] += 1
            session.client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": session.versions[uri]},
                "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                                    "text": "import torch\nq = torch.ones(1, requires_grad=True)\nq.numpy()\n"}]})
            await session.checkpoint()
            await session.client.stop()
        finally:
            await session.client.kill()
        return session.failures

    failures = asyncio.run(asyncio.wait_for(run(), 120))
    assert any("differ from the client's text" in f for f in failures), failures


def test_malformed_stream_then_normal_work(tmp_path):
    """Every kind of malformed message in a row, then the server still answers and exits cleanly."""
    async def run():
        client = gs_lsp.RawLspClient(stderr_path=str(tmp_path / "server-stderr.txt"))
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path)
            for raw in gs_lsp.MALFORMED * 3:
                client.send_raw(raw)
            unknown = await client.request("gradsight/noSuchMethod", {"x": 1}, timeout=30)
            assert unknown.get("error", {}).get("code") == -32601  # MethodNotFound
            odd = await client.request("textDocument/hover", {"textDocument": {"uri": 5},
                                                              "position": {"line": 0, "character": 0}}, timeout=30)
            assert "result" in odd or "error" in odd
            uri = (tmp_path / "a.py").as_uri()
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                    "text": gs_lsp.UNICODE_DOC}})
            answer = await client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=60)
            assert any(d["code"] == "GS201" for d in answer["result"]["items"])
            assert client.malformed_responses == []  # and everything it wrote back was well-formed
            assert await client.stop() == 0
        finally:
            await client.kill()

    asyncio.run(asyncio.wait_for(run(), 120))
