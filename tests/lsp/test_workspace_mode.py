"""`diagnosticMode = "workspace"`: diagnostics for files that are not open, from the on-disk cache, in the
background; `openFiles` (the default) publishes nothing for them."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from lsp_helpers import NUMPY_CASE, capabilities, lsp, write

CLEAN = "import torch\n\nx = torch.ones(3)\nprint(x.sum())\n"


def project(ws):
    _, bad_uri = write(ws, "pkg/bad.py", NUMPY_CASE)
    _, clean_uri = write(ws, "main.py", CLEAN)
    write(ws, "build/generated.py", NUMPY_CASE)  # excluded by default
    write(ws, ".hidden/also.py", NUMPY_CASE)
    return bad_uri, clean_uri


async def test_workspace_mode_publishes_unopened_files_from_the_cache(ws):
    bad_uri, clean_uri = project(ws)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False,
                   init_options={"settings": {"diagnosticMode": "workspace"}}) as client:
        diags = await client.diagnostics_for(bad_uri, timeout=30)
        assert any(d.code == "GS201" for d in diags)
        assert (ws / ".gradsight_cache").is_dir()  # results went through the on-disk cache
        await asyncio.sleep(0.5)
        uris = {p.uri for p in client.published}
        assert not any("/build/" in u or "/.hidden/" in u for u in uris), uris
        assert clean_uri not in uris or not client.diagnostics[clean_uri]
        assert not any(m.type == types.MessageType.Error for m in client.log_messages)

        # Opening the file: its own (versioned) diagnostics; closing it: the saved file's come back.
        client.open(bad_uri, NUMPY_CASE + "x = 1\n", version=3)
        assert any(d.code == "GS201" for d in await client.diagnostics_for(bad_uri, 3))
        seen = len(client.published)
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=bad_uri)))
        await client.wait_for(lambda: any(p.uri == bad_uri and p.diagnostics and p.version is None
                                          for p in client.published[seen:]), 30, "on-disk diagnostics again")

        # Back to openFiles: the workspace diagnostics are taken back.
        seen = len(client.published)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"gradsight": {"diagnosticMode": "openFiles"}}))
        await client.wait_for(lambda: any(p.uri == bad_uri and not p.diagnostics for p in client.published[seen:]),
                              10, "cleared workspace diagnostics")


async def test_open_files_mode_is_the_default(ws):
    bad_uri, clean_uri = project(ws)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False) as client:
        client.open(clean_uri, CLEAN)
        await client.diagnostics_for(clean_uri, 1)
        await asyncio.sleep(1.0)
        assert bad_uri not in {p.uri for p in client.published}


async def test_normal_use_logs_no_errors(ws):
    """Hovers cancelled after they were answered (VS Code does it as the mouse moves) are normal: no
    error or warning line on stderr (the output channel) or in `window/logMessage`."""
    bad_uri, clean_uri = project(ws)
    async with lsp(ws, caps=capabilities("visual-studio-code", pull=True), stub=False,
                   init_options={"settings": {"diagnosticMode": "workspace"}}) as client:
        client.open(bad_uri, NUMPY_CASE)
        await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=bad_uri)))
        for i in range(5):
            msg_id = f"hover-{i}"
            future = client.protocol.send_request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=bad_uri), position=types.Position(line=7, character=27)),
                msg_id=msg_id)
            await asyncio.wrap_future(future)
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        client.replace_all(bad_uri, NUMPY_CASE + "y = 2\n", 2)
        await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=bad_uri)))
        await asyncio.sleep(0.5)
        process = client._server
        assert not [m for m in client.log_messages if m.type <= types.MessageType.Warning]
    stderr = (await process.stderr.read()).decode(errors="replace")
    assert not [line for line in stderr.splitlines() if " ERROR " in line or " WARNING " in line
                or "Cancel notification" in line], stderr
