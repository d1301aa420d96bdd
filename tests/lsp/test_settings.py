"""Settings: initializationOptions, workspace/configuration, didChangeConfiguration, pyproject.toml."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from lsp_helpers import NUMPY_CASE, capabilities, lsp, write


def codes(diags) -> set[str]:
    return {d.code for d in diags}


async def next_publish(client, uri, after: int):
    await client.wait_for(lambda: len([p for p in client.published if p.uri == uri]) > after, what="a new publish")
    return [p for p in client.published if p.uri == uri][-1].diagnostics


def count(client, uri) -> int:
    return len([p for p in client.published if p.uri == uri])


async def test_bad_settings_warn_and_fall_back(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    options = {"settings": {"inlayHints": "sometimes", "logLevel": "chatty", "trace": {"maxSteps": "many"}}}
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False, init_options=options) as client:
        client.open(uri, NUMPY_CASE)
        assert "GS201" in codes(await client.diagnostics_for(uri, 1))
        warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
        assert any("inlay-hints" in m and "sometimes" in m for m in warnings)
        assert any("logLevel" in m for m in warnings)
        assert any("max-steps" in m for m in warnings)
        # The default (transitions) is in force.
        hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=20, character=0))))
        assert hints is not None


async def test_workspace_configuration_and_change(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False,
                   configuration={"ignore": ["GS201"], "logLevel": "debug"}) as client:
        # VS Code gets didChangeConfiguration registered dynamically for the `gradsight` section.
        await client.wait_for(lambda: any(r.method == types.WORKSPACE_DID_CHANGE_CONFIGURATION
                                          for r in client.registrations), what="registration")
        await asyncio.sleep(0.2)
        client.open(uri, NUMPY_CASE)
        assert "GS201" not in codes(await client.diagnostics_for(uri, 1))
        seen = count(client, uri)
        client.set_configuration({"severity": {"GS201": "hint"}, "logLevel": "debug"}, section="gradsight")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        diags = await next_publish(client, uri, seen)
        (numpy,) = [d for d in diags if d.code == "GS201"]
        assert numpy.severity == types.DiagnosticSeverity.Hint
        assert any(m.type == types.MessageType.Log for m in client.log_messages)  # debug logging reached us


async def test_pushed_settings_without_workspace_configuration(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False,
                   init_options={"settings": {"logLevel": "error"}}) as client:
        client.open(uri, NUMPY_CASE)
        assert "GS201" in codes(await client.diagnostics_for(uri, 1))
        seen = count(client, uri)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"gradsight": {"ignore": ["GS2"], "logLevel": "error"}}))
        assert "GS201" not in codes(await next_publish(client, uri, seen))
        assert not client.log_messages  # logLevel=error: nothing below errors reaches the client


async def test_pyproject_is_read_watched_and_overridden(ws):
    (ws / "pyproject.toml").write_text('[tool.gradsight]\nignore = ["GS201"]\n')
    path, uri = write(ws, "pkg/case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False) as client:
        await client.wait_for(lambda: any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
                                          for r in client.registrations), what="file watcher registration")
        watcher = next(r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
        assert watcher.register_options["watchers"][0]["globPattern"] == "**/pyproject.toml"
        client.open(uri, NUMPY_CASE)
        assert "GS201" not in codes(await client.diagnostics_for(uri, 1))

        # The file changes on disk and the client says so: the server re-reads it.
        (ws / "pyproject.toml").write_text('[tool.gradsight]\nseverity = { GS201 = "information" }\n')
        seen = count(client, uri)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=(ws / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed)]))
        (numpy,) = [d for d in await next_publish(client, uri, seen) if d.code == "GS201"]
        assert numpy.severity == types.DiagnosticSeverity.Information

        # Editor settings win over [tool.gradsight].
        seen = count(client, uri)
        client.set_configuration({"severity": {"GS201": "warning"}}, section="gradsight")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        (numpy,) = [d for d in await next_publish(client, uri, seen) if d.code == "GS201"]
        assert numpy.severity == types.DiagnosticSeverity.Warning

        # A broken pyproject.toml: a warning, defaults, and the server keeps working.
        (ws / "pyproject.toml").write_text("[tool.gradsight\n")
        seen = count(client, uri)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=(ws / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed)]))
        assert "GS201" in codes(await next_publish(client, uri, seen))
        assert any("pyproject.toml" in m.message and m.type == types.MessageType.Warning for m in client.messages)
