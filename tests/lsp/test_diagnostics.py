"""Diagnostics end to end: push and pull, versions, resultIds, robustness."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from lsp_helpers import NUMPY_CASE, capabilities, current_diagnostics, lsp, utf_units, write

# The seed case with a CJK name and an emoji before `pred`, so every position encoding differs.
WIDE_CASE = NUMPY_CASE.replace(
    "histogram = np.histogram(pred.numpy(), bins=3)",
    '直方图 = np.histogram(("😀", pred.numpy())[1], bins=3)  # 😀',
).replace("print(histogram)", "print(直方图)")

CLIENTS = [
    pytest.param(dict(name="visual-studio-code", pull=True), id="vscode-pull"),
    pytest.param(dict(name="visual-studio-code"), id="vscode-push"),
    pytest.param(dict(name="neovim@v0.7"), id="neovim-0.7-push"),
    pytest.param(dict(name="neovim"), id="neovim-latest-pull-utf8"),
    pytest.param(dict(name="emacs"), id="emacs-push-utf32"),
]


@pytest.mark.parametrize("client_spec", CLIENTS)
async def test_numpy_finding_with_fix_and_links(ws, client_spec):
    path, uri = write(ws, "case.py", WIDE_CASE)
    async with lsp(ws, caps=capabilities(**client_spec), stub=False) as client:
        encoding = client.initialize_result.capabilities.position_encoding or "utf-16"
        client.open(uri, WIDE_CASE)
        diags = await current_diagnostics(client, uri, 1)
        numpy = [d for d in diags if d.code == "GS201"]
        assert len(numpy) == 1, diags
        d = numpy[0]
        line = WIDE_CASE.splitlines()[7]
        assert d.range.start == types.Position(line=7, character=utf_units(line[:line.index("pred")], encoding))
        assert d.range.end == types.Position(line=7, character=utf_units(line[:line.index(")[1]")], encoding))
        assert d.source == "gradsight"
        assert "numpy" in d.message.lower()
        assert d.code_description.href.endswith("GS201.md")
        assert d.severity == types.DiagnosticSeverity.Error
        assert d.related_information and d.related_information[0].location.uri == uri
        assert d.related_information[0].location.range.start.line == 6
        assert d.data["fix"]["applicability"] == "safe" and d.data["version"] == 1
        fixed = line[:line.index("pred") + 4] + d.data["fix"]["edits"][0]["new_text"] + line[line.index("pred") + 4:]
        assert "pred.detach().numpy()" in fixed


async def test_pull_result_ids(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("visual-studio-code", pull=True), stub=False) as client:
        caps = client.initialize_result.capabilities
        assert caps.diagnostic_provider.identifier == "gradsight"
        client.open(uri, NUMPY_CASE)

        async def pull(previous=None):
            return await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous))

        first = await pull()
        assert first.kind == "full" and first.result_id.startswith(f"{uri}@1#")
        again = await pull(first.result_id)
        assert again.kind == "unchanged" and again.result_id == first.result_id
        client.replace_all(uri, NUMPY_CASE + "\n", 2)
        second = await pull(first.result_id)
        assert second.kind == "full" and second.result_id.startswith(f"{uri}@2#")
        assert [d.code for d in second.items] == [d.code for d in first.items]
        # A settings change makes every report stale, and the client is told to pull again.
        refreshes = client.diagnostic_refresh_count
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"gradsight": {"ignore": ["GS201"]}}))
        client.set_configuration({"ignore": ["GS201"]}, section="gradsight")
        await client.wait_for(lambda: client.diagnostic_refresh_count > refreshes, what="diagnostic refresh")
        third = await pull(second.result_id)
        assert third.kind == "full" and "GS201" not in [d.code for d in third.items]
        assert not client.published  # a pull client never gets pushed diagnostics


async def test_outdated_analyses_are_never_published(ws):
    slow = "# stub: sleep=0.4\n" + NUMPY_CASE
    path, uri = write(ws, "slow.py", slow)
    async with lsp(ws, caps=capabilities("neovim@v0.7")) as client:
        client.open(uri, slow, version=1)
        await asyncio.sleep(0.1)  # the analysis of version 1 is running now
        client.replace_all(uri, slow + "# v2\n", 2)
        client.replace_all(uri, slow + "# v3\n", 3)
        diags = await client.diagnostics_for(uri, 3)
        await asyncio.sleep(0.6)
        assert [p.version for p in client.published if p.uri == uri] == [3]
        assert {d.code for d in diags} >= {"GS999"}


async def test_engine_failure_keeps_the_server_alive(ws):
    broken = "x = 1  # stub: raise\n"  # the stub also prints to stdout first: the channel must survive
    path, uri = write(ws, "broken.py", broken)
    async with lsp(ws, caps=capabilities("neovim@v0.7")) as client:
        client.open(uri, broken)
        assert await client.diagnostics_for(uri, 1) == []
        await client.wait_for(lambda: any("internal error" in m.message for m in client.messages), what="message")
        client.replace_all(uri, NUMPY_CASE, 2)
        assert any(d.code == "GS999" for d in await client.diagnostics_for(uri, 2))


async def test_syntax_error_and_bad_positions(ws):
    text = "def broken(:\n    pass\n"
    path, uri = write(ws, "bad.py", text)
    doc = types.TextDocumentIdentifier(uri=uri)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False) as client:
        client.open(uri, text)
        diags = await client.diagnostics_for(uri, 1)
        assert [d.code for d in diags] == ["GS001"]
        far = types.Position(line=500, character=3)
        assert await client.text_document_hover_async(types.HoverParams(text_document=doc, position=far)) is None
        hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=doc, range=types.Range(start=far, end=types.Position(line=900, character=0))))
        assert not hints
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc, range=types.Range(start=far, end=far), context=types.CodeActionContext(diagnostics=[])))
        assert not actions
        # Not python: not analysed, no answers.
        notes = uri.replace("bad.py", "notes.md")
        client.open(notes, "x.numpy()\n", language="markdown")
        assert await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=notes),
            position=types.Position(line=0, character=0))) is None
        assert notes not in {p.uri for p in client.published}
        unknown = types.TextDocumentIdentifier(uri=uri.replace("bad.py", "never-opened.py"))
        assert await client.text_document_hover_async(types.HoverParams(
            text_document=unknown, position=types.Position(line=0, character=0))) is None


async def test_close_clears_pushed_diagnostics(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False) as client:
        client.open(uri, NUMPY_CASE)
        assert await client.diagnostics_for(uri, 1)
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        await client.wait_for(lambda: len(client.published[-1].diagnostics) == 0, what="cleared diagnostics")


async def test_importers_are_reanalysed_with_unsaved_text(ws):
    write(ws, "pkg/__init__.py", "")
    util_text = "import torch\n\ndef make():\n    return torch.ones(2, requires_grad=True)\n"
    no_grad = util_text.replace(", requires_grad=True", "")
    _, util_uri = write(ws, "pkg/util.py", util_text)
    main_text = "from pkg.util import make\n\nx = make()\ny = x.numpy()\n"
    _, main_uri = write(ws, "main.py", main_text)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False) as client:
        client.open(util_uri, util_text)
        client.open(main_uri, main_text)
        assert "GS201" in {d.code for d in await client.diagnostics_for(main_uri, 1)}
        await client.diagnostics_for(util_uri, 1)
        # Edit pkg/util.py without saving it: main.py (version 1 still) is analysed again, against
        # the buffer's text, and its finding goes away.
        client.replace_all(util_uri, no_grad, 2)
        await client.wait_for(lambda: any(p.uri == main_uri and not p.diagnostics for p in client.published),
                              what="main.py re-analysed after pkg/util.py changed")
        assert [p.version for p in client.published if p.uri == main_uri][-1] == 1
    async with lsp(ws, caps=capabilities("visual-studio-code", pull=True), stub=False) as client:
        client.open(util_uri, util_text)
        client.open(main_uri, main_text)
        first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=main_uri)))
        assert "GS201" in {d.code for d in first.items}
        client.replace_all(util_uri, no_grad, 2)
        await client.wait_for(lambda: client.diagnostic_refresh_count > 0, what="diagnostic refresh")
        second = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=main_uri), previous_result_id=first.result_id))
        assert second.kind == "full" and second.result_id != first.result_id
        assert "GS201" not in {d.code for d in second.items}


async def test_saved_changes_to_an_imported_file_reanalyse_importers(ws):
    write(ws, "pkg/__init__.py", "")
    util_path, _ = write(ws, "pkg/util.py",
                         "import torch\n\ndef make():\n    return torch.ones(2, requires_grad=True)\n")
    main_text = "from pkg.util import make\n\nx = make()\ny = x.numpy()\n"
    _, main_uri = write(ws, "main.py", main_text)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False) as client:
        await client.wait_for(lambda: client.registrations, what="file watchers")
        watchers = client.registrations[0].register_options["watchers"]
        assert {w["globPattern"] for w in watchers} == {"**/pyproject.toml", "**/*.py"}
        client.open(main_uri, main_text)
        assert "GS201" in {d.code for d in await client.diagnostics_for(main_uri, 1)}
        util_path.write_text("import torch\n\ndef make():\n    return torch.ones(2)\n")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=util_path.as_uri(), type=types.FileChangeType.Changed)]))
        await client.wait_for(lambda: not client.published[-1].diagnostics, what="main.py re-analysed")


async def test_a_runaway_analysis_does_not_hang_requests(ws):
    slow = "# stub: sleep=3.5\n" + NUMPY_CASE  # the stub server waits at most 2 s for an analysis
    path, uri = write(ws, "slow.py", slow)
    _, quick_uri = write(ws, "quick.py", NUMPY_CASE)
    hover_params = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri),
                                     position=types.Position(line=8, character=27))
    async with lsp(ws, caps=capabilities("neovim@v0.7")) as client:
        client.open(uri, slow)
        assert await asyncio.wait_for(client.text_document_hover_async(hover_params), 8) is None
        client.open(quick_uri, NUMPY_CASE)  # the other worker still serves other documents
        assert await client.diagnostics_for(quick_uri, 1)
        # The slow analysis is not dropped: it is published when it ends, and then answers requests.
        assert await client.diagnostics_for(uri, 1, timeout=15)
        assert await client.text_document_hover_async(hover_params) is not None
