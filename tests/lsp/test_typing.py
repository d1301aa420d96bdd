"""Typing a file character by character: hundreds of incremental didChange events.

The final diagnostics must equal what the engine reports on the final text (what `gradsight check`
prints), published versions must never go backwards, and the last one must be the final version.
The text holds an emoji and CJK characters, so the UTF-16 positions the client computes for each
insertion exercise the server's incremental sync too.
"""

from __future__ import annotations

import asyncio

from lsprotocol import types

from gradsight.config import Config
from gradsight.analysis import analyze_source
from lsp_helpers import capabilities, lsp, utf_units, write

FINAL = """\
import numpy as np
import torch
import torch.nn as nn

# 模型 😀 a tiny model
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
batch = torch.randn(6, 3)
pred = net(batch)
histogram = np.histogram(pred.numpy(), bins=3)
print(histogram)
"""


async def test_typing_character_by_character(ws):
    path, uri = write(ws, "typed.py", FINAL)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False) as client:
        client.open(uri, "", version=1)
        version = 1
        line, character = 0, 0
        for i, ch in enumerate(FINAL):
            version += 1
            at = types.Position(line=line, character=character)
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(start=at, end=at), text=ch)]))
            if ch == "\n":
                line, character = line + 1, 0
            else:
                character += utf_units(ch, "utf-16")
            if i % 7 == 0:
                # Let the server run now and then, as a person typing would: some analyses finish,
                # most are superseded.
                await asyncio.sleep(0.004)
        final_version = version
        diags = await client.diagnostics_for(uri, final_version, timeout=20)

        versions = [p.version for p in client.published if p.uri == uri]
        assert versions == sorted(versions), versions
        assert versions[-1] == final_version
        assert len(versions) < len(FINAL) // 4, "edits were not debounced"

        expected = analyze_source(FINAL, str(path), Config())
        assert sorted((d.code, d.range.start.line + 1) for d in diags) == \
            sorted((f.code, f.line) for f in expected.findings)
        assert any(d.code == "GS201" and d.range.start.line == 8 for d in diags)

        # The server's copy of the text is the final text: a hover on `pred` in the last
        # use of it answers (and a position past the end does not).
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=8, character=26)))
        assert hover is not None and "grad" in hover.contents.value
