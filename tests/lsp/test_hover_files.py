"""Hovers and inlay hints on a three-file project: the finding once, the value's state without
contradiction, chain and related links into the file each line is in, plain text without markup."""

from __future__ import annotations

import re

from lsprotocol import types

from lsp_helpers import capabilities, lsp, write

MODELS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        h = self.fc(x)
        return h.relu()


def make_loss(out, y):
    loss = ((out - y) ** 2).mean()
    return loss
"""

TRAIN = """\
import torch
from models import Net, make_loss

model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total_loss = 0
for step in range(3):
    x = torch.randn(8, 4)
    y = torch.randn(8, 2)
    out = model(x)
    loss = make_loss(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss
print(total_loss)
"""


def project(ws):
    models, models_uri = write(ws, "models.py", MODELS)
    train, train_uri = write(ws, "train.py", TRAIN)
    return models_uri, train_uri


async def hover(client, uri, line, character):
    result = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))
    return result


async def test_hover_links_into_the_file_the_line_is_in(ws):
    models_uri, train_uri = project(ws)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False) as client:
        client.open(train_uri, TRAIN)
        await client.diagnostics_for(train_uri, 1)
        # `out = model(x)`: its history is `h.relu()` in models.py line 12, not train.py line 12.
        text = (await hover(client, train_uri, 9, 5)).contents.value
        assert "requires grad" in text
        assert f"[models.py line 12]({models_uri}#L12)" in text
        assert f"{train_uri}#L12" not in text
        # `loss = make_loss(out, y)`: made at models.py line 16.
        text = (await hover(client, train_uri, 10, 5)).contents.value
        assert f"[models.py line 16]({models_uri}#L16)" in text


async def test_hover_on_a_flagged_line_shows_the_finding_once_without_contradiction(ws):
    models_uri, train_uri = project(ws)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False) as client:
        client.open(train_uri, TRAIN)
        diags = await client.diagnostics_for(train_uri, 1)
        [gs404] = [d for d in diags if d.code == "GS404"]
        line = gs404.range.start.line
        text = (await hover(client, train_uri, line, 6)).contents.value
        first_sentence = gs404.message.split(";")[0].split(". ")[0]
        assert text.count(first_sentence) == 1, text
        assert re.sub(r"\]\([^)]*\)", "]", text).count("GS404") == 1  # once, links aside
        # The warning says every step's graph stays in memory: the state must not say the graph is freed.
        # (backward frees the graph's *saved tensors*; saying so is consistent.)
        assert not re.search(r"graph (already )?freed|freed by backward", text), text
        # Related locations name the file they are in.
        for info in gs404.related_information or []:
            if info.location.uri == models_uri:
                assert f"models.py line {info.location.range.start.line + 1}" in text


async def test_plain_text_hover_has_no_markdown(ws):
    models_uri, train_uri = project(ws)
    caps = capabilities("neovim@v0.7")
    caps.text_document.hover.content_format = [types.MarkupKind.PlainText]
    async with lsp(ws, caps=caps, stub=False) as client:
        client.open(train_uri, TRAIN)
        await client.diagnostics_for(train_uri, 1)
        for line, character in ((9, 5), (14, 6), (10, 5)):
            result = await hover(client, train_uri, line, character)
            assert result.contents.kind == types.MarkupKind.PlainText
            text = result.contents.value
            assert not re.search(r"\]\(|\*\*[^*\s][^*]*\*\*|`|^---$", text, re.M), text
        assert "models.py line 12" in (await hover(client, train_uri, 9, 5)).contents.value


async def test_inlay_hints_in_plain_words_where_gradients_start(ws):
    models_uri, train_uri = project(ws)
    async with lsp(ws, caps=capabilities("neovim"), stub=False, configuration={"inlayHints": "transitions"}) as client:
        client.open(train_uri, TRAIN)
        hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=train_uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=16, character=0))))
        by_line = {h.position.line: h.label for h in hints}
        assert by_line.get(9) == "requires grad"  # `out = model(x)`: where gradients start
        assert 7 not in by_line  # `x = torch.randn(...)`: no grad from the start is no transition
        assert all("·" not in str(label) and "non-leaf" not in str(label) for label in by_line.values())
        assert len(by_line) == len(hints)  # at most one hint per line
        client.set_configuration({"inlayHints": "all"}, section="gradsight")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        for _ in range(100):
            every = await client.text_document_inlay_hint_async(types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=train_uri),
                range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=16, character=0))))
            if len(every) > len(hints):
                break
        assert len(every) > len(hints)
        assert max(len(str(h.label)) for h in every) <= 22


async def test_vscode_hover_leaves_the_message_to_the_diagnostic_hover(ws):
    """VS Code shows the diagnostic's message at the top of the hover: ours must not repeat it."""
    models_uri, train_uri = project(ws)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False, client_name="Visual Studio Code") as client:
        client.open(train_uri, TRAIN)
        diags = await client.diagnostics_for(train_uri, 1)
        [gs404] = [d for d in diags if d.code == "GS404"]
        text = (await hover(client, train_uri, gs404.range.start.line, 6)).contents.value
        assert gs404.message.split(";")[0] not in text
        assert "GS404" in text and "Fix: Accumulate" in text and "models.py line 16" in text
        assert "**`total_loss`**" in text  # the value's state still follows


def test_transition_hints_start_again_in_each_function():
    from gradsight.analysis import analyze_source
    from gradsight.lsp import convert

    text = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 2)


def train(x):
    out = model(x)
    return out.sum()


def evaluate(x):
    out = model(x)
    return out.mean()
"""
    facts = analyze_source(text, "/tmp/two_functions.py").facts
    lines = text.splitlines()
    hinted = {(f.line, convert.plain_label(f)) for _, f in convert.hinted_facts(facts, lines, "transitions")}
    assert (8, "requires grad") in hinted and (13, "requires grad") in hinted, hinted


def test_transition_hints_where_gradients_are_cut():
    from gradsight.analysis import analyze_source
    from gradsight.lsp import convert

    text = """\
import torch

w = torch.randn(3, requires_grad=True)
x = w * 2
x = x.detach()
with torch.no_grad():
    y = w * 3
z = w.sum()
z.backward()
"""
    facts = analyze_source(text, "/tmp/cut.py").facts
    hinted = [(f.line, convert.plain_label(f)) for _, f in convert.hinted_facts(facts, text.splitlines(), "transitions")]
    assert hinted == [(3, "requires grad"), (4, "requires grad"), (5, "no grad"), (7, "no grad"),
                      (8, "requires grad"), (9, "runs backward")], hinted
