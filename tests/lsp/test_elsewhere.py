"""In the editor, a finding that train.py's analysis puts in center.py (where the fix goes, `Reporter.add_in`)
shows in center.py while both are open, is never shown in train.py at center.py's line numbers, and goes away
when train.py is fixed or closed."""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from lsprotocol import types  # noqa: E402

from lsp_helpers import capabilities, lsp, write  # noqa: E402
from test_findings_elsewhere import CENTER, TAGGER, TRAIN, TRAIN_TAGGER  # noqa: E402


def codes(diags) -> list[tuple[int, str]]:
    return sorted((d.range.start.line + 1, str(d.code)) for d in diags)


async def test_finding_in_the_other_open_file(ws):
    _, center_uri = write(ws, "center.py", CENTER)
    _, train_uri = write(ws, "train.py", TRAIN)
    async with lsp(ws, caps=capabilities("neovim", pull=False), stub=False) as client:
        client.open(center_uri, CENTER)
        client.open(train_uri, TRAIN)
        await client.wait_for(lambda: (13, "GS402") in codes(client.diagnostics.get(center_uri, [])),
                              timeout=30, what="GS402 in center.py")
        assert all(str(d.code) != "GS402" for d in await client.diagnostics_for(train_uri, 1))
        [diag] = [d for d in client.diagnostics[center_uri] if str(d.code) == "GS402"]
        assert any(info.location.uri == train_uri for info in diag.related_information or [])
        # Fixing train.py's side (no backward any more) takes it away from center.py.
        fixed = TRAIN.replace("    loss.backward()\n", "")
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=train_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
        await client.wait_for(lambda: (13, "GS402") not in codes(client.diagnostics.get(center_uri, [])),
                              timeout=30, what="GS402 gone from center.py")
        # Back again, then closing train.py takes it away too.
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=train_uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=TRAIN)]))
        await client.wait_for(lambda: (13, "GS402") in codes(client.diagnostics.get(center_uri, [])),
                              timeout=30, what="GS402 back in center.py")
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=train_uri)))
        await client.wait_for(lambda: (13, "GS402") not in codes(client.diagnostics.get(center_uri, [])),
                              timeout=30, what="GS402 gone after closing train.py")


async def test_pull_client_gets_it_when_it_pulls_the_other_file(ws):
    _, center_uri = write(ws, "center.py", CENTER)
    _, train_uri = write(ws, "train.py", TRAIN)
    async with lsp(ws, caps=capabilities("neovim", pull=True), stub=False) as client:
        client.open(center_uri, CENTER)
        client.open(train_uri, TRAIN)

        async def pull(uri):
            report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))
            return codes(report.items)

        assert (13, "GS402") not in await pull(train_uri)
        assert (13, "GS402") in await pull(center_uri)


async def test_module_file_shows_one_finding_when_the_training_script_is_open(ws):
    # tagger.py alone: GS413 (its shape). With train.py open too, train.py's analysis puts GS402 on the same
    # statement, which restates it with evidence: the editor shows GS402 only, and GS413 again once train.py
    # is closed.
    _, tagger_uri = write(ws, "tagger.py", TAGGER)
    _, train_uri = write(ws, "train.py", TRAIN_TAGGER)
    async with lsp(ws, caps=capabilities("neovim", pull=False), stub=False) as client:
        client.open(tagger_uri, TAGGER)
        await client.wait_for(lambda: (13, "GS413") in codes(client.diagnostics.get(tagger_uri, [])),
                              timeout=30, what="GS413 in tagger.py")
        client.open(train_uri, TRAIN_TAGGER)
        await client.wait_for(lambda: [c for c in codes(client.diagnostics.get(tagger_uri, [])) if c[0] == 13]
                              == [(13, "GS402")], timeout=30, what="only GS402 at tagger.py line 13")
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=train_uri)))
        await client.wait_for(lambda: [c for c in codes(client.diagnostics.get(tagger_uri, [])) if c[0] == 13]
                              == [(13, "GS413")], timeout=30, what="GS413 back after closing train.py")
