"""Fixtures for the language server tests; the helpers live in lsp_helpers.py."""

from __future__ import annotations

import pathlib

import pytest


@pytest.fixture
def ws(tmp_path: pathlib.Path) -> pathlib.Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root
