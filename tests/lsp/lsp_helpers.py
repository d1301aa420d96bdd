"""Helpers for driving the gradsight language server over stdio with pytest-lsp.

(A module of its own rather than conftest.py: several test folders have a conftest, and
`from conftest import ...` would depend on which one was imported first.)

`lsp(...)` starts a server (the real one, or the one with the stub engine), initialises it with the
capabilities of a recorded client, and yields a `Client` that also records every
`publishDiagnostics` (with its version), every `workspace/applyEdit` and every registration.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import sys
import time
from typing import Any, AsyncIterator

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pygls.protocol import default_converter
from pygls.uris import from_fs_path

HERE = pathlib.Path(__file__).parent
REAL_SERVER = [sys.executable, "-m", "gradsight", "lsp"]
STUB_SERVER = [sys.executable, str(HERE / "stub_server.py")]

NUMPY_CASE = """\
import numpy as np
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
batch = torch.randn(6, 3)
pred = net(batch)
histogram = np.histogram(pred.numpy(), bins=3)
print(histogram)
"""


class Client(LanguageClient):
    """pytest-lsp's client plus records of what the server sent."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.applied_edits: list[types.ApplyWorkspaceEditParams] = []
        self.registrations: list[types.Registration] = []
        self.inlay_refreshes = 0

    async def wait_for(self, predicate, timeout: float = 10.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            await asyncio.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}")

    async def diagnostics_for(self, uri: str, version: int | None = None, timeout: float = 10.0):
        """The latest published diagnostics for `uri` (with `version`, when given)."""

        def found():
            for params in reversed(self.published):
                if params.uri == uri and (version is None or params.version == version):
                    return params
            return None

        params = await self.wait_for(found, timeout, f"diagnostics for {uri} v{version}")
        return list(params.diagnostics)

    def open(self, uri: str, text: str, version: int = 1, language: str = "python") -> None:
        self.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))

    def replace_all(self, uri: str, text: str, version: int) -> None:
        self.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def _make_client() -> Client:
    client = Client(converter_factory=default_converter)

    def publish(c: Client, params: types.PublishDiagnosticsParams) -> None:
        c.published.append(params)
        c.diagnostics[params.uri] = params.diagnostics

    def apply_edit(c: Client, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        c.applied_edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    def register(c: Client, params: types.RegistrationParams) -> None:
        c.registrations.extend(params.registrations)

    def inlay_refresh(c: Client, params: None) -> None:
        c.inlay_refreshes += 1

    register_lsp_features(client, {
        **DEFAULT_CLIENT_FEATURES,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
        types.WORKSPACE_APPLY_EDIT: apply_edit,
        types.CLIENT_REGISTER_CAPABILITY: register,
        types.WORKSPACE_INLAY_HINT_REFRESH: inlay_refresh,
    })
    return client


def capabilities(name: str, *, pull: bool | None = None, notebooks: bool = False) -> types.ClientCapabilities:
    """A recorded client's capabilities, optionally with pull diagnostics / notebook sync added or removed.

    The recorded VS Code (1.65) predates pull diagnostics; current VS Code has them, so `pull=True`
    adds `textDocument.diagnostic` (with refresh support) the way VS Code >= 1.67 declares it.
    """
    caps = client_capabilities(name) if name != "none" else types.ClientCapabilities()
    if pull is True:
        caps.text_document = caps.text_document or types.TextDocumentClientCapabilities()
        caps.text_document.diagnostic = types.DiagnosticClientCapabilities(
            dynamic_registration=True, related_document_support=False)
        caps.workspace = caps.workspace or types.WorkspaceClientCapabilities()
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    elif pull is False and caps.text_document is not None:
        caps.text_document.diagnostic = None
    if notebooks:
        caps.notebook_document = types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=False))
    return caps


@contextlib.asynccontextmanager
async def lsp(root: pathlib.Path, *, caps: types.ClientCapabilities | None = None, stub: bool = True,
              init_options: Any = None, configuration: dict | None = None,
              server_args: tuple[str, ...] = (), env: dict[str, str] | None = None,
              client_name: str | None = None) -> AsyncIterator[Client]:
    client = _make_client()
    if configuration is not None:
        client.set_configuration(configuration, section="gradsight")
    command = (STUB_SERVER if stub else REAL_SERVER) + list(server_args)
    if env is not None:
        await client.start_io(*command, env={**os.environ, **env})
    else:
        await client.start_io(*command)
    finished = False
    try:
        result = await asyncio.wait_for(client.initialize_session(types.InitializeParams(
            capabilities=caps if caps is not None else types.ClientCapabilities(),
            root_uri=from_fs_path(str(root)),
            workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(root)), name=root.name)],
            initialization_options=init_options,
            client_info=types.ClientInfo(name=client_name) if client_name else None,
        )), 20)
        client.initialize_result = result  # type: ignore[attr-defined]
        yield client
        finished = True
    finally:
        process = client._server
        if finished:
            await asyncio.wait_for(client.shutdown_session(), 10)
        elif process is not None and process.returncode is None:
            process.kill()  # the test failed: do not wait for a polite shutdown
        await client.stop()


def uri_of(path: pathlib.Path) -> str:
    return from_fs_path(str(path))


def write(root: pathlib.Path, name: str, text: str) -> tuple[pathlib.Path, str]:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    return path, uri_of(path)


def is_pull(caps: types.ClientCapabilities) -> bool:
    return caps.text_document is not None and caps.text_document.diagnostic is not None


async def current_diagnostics(client: Client, uri: str, version: int) -> list[types.Diagnostic]:
    """Diagnostics for `uri` at `version`: pulled when the client pulls, else the pushed ones."""
    if is_pull(client.capabilities):
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        return list(report.items)
    return await client.diagnostics_for(uri, version)


def utf_units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def apply_text_edits(text: str, edits, encoding: str = "utf-16") -> str:
    """Apply LSP text edits (non-overlapping) to `text`, the way an editor would."""
    lines = text.splitlines(keepends=True) or [""]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(p: types.Position) -> int:
        if p.line >= len(lines):
            return len(text)
        line = lines[p.line].rstrip("\r\n")
        units = 0
        for i, ch in enumerate(line):
            if units >= p.character:
                return starts[p.line] + i
            units += utf_units(ch, encoding)
        return starts[p.line] + len(line)

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_of(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    """The text edits for `uri` in a workspace edit, from `changes` or `documentChanges`."""
    if edit.changes:
        return list(edit.changes.get(uri, []))
    out = []
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
            out.extend(change.edits)
    return out
