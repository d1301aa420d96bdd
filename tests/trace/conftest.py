"""Shared, session-scoped traces: each child process pays a torch import (2-5 s on this machine), so the
seed cases and the fixture scripts are traced in one batch each (`run_traces`) and many tests read them."""

from __future__ import annotations

import pytest
from trace_helpers import SCRIPT_BATCH, SCRIPTS, TRUTH, load_truth, seed_path


@pytest.fixture(scope="session")
def seed_traces():
    pytest.importorskip("torch")
    cases = load_truth()
    if not cases:
        pytest.skip(f"{TRUTH} is missing")
    from gradsight.trace import run_traces

    results = run_traces([str(seed_path(c["file"])) for c in cases], device="cpu", timeout=300)
    return {c["file"]: r for c, r in zip(cases, results)}


@pytest.fixture(scope="session")
def script_traces():
    pytest.importorskip("torch")
    from gradsight.trace import run_traces

    results = run_traces([str(SCRIPTS / s) for s in SCRIPT_BATCH], device="cpu", max_steps=3, timeout=300)
    return dict(zip(SCRIPT_BATCH, results))
