"""The tracer on a real GPU: placement and graph memory per backward. Skips without CUDA."""

from __future__ import annotations

import os

import pytest

from trace_helpers import SCRIPTS

pytestmark = pytest.mark.torch


def _cuda():
    # Decide without importing torch where there is plainly no NVIDIA device (saves seconds per run).
    if not os.path.exists("/dev/nvidiactl") and not os.environ.get("CUDA_VISIBLE_DEVICES"):
        pytest.skip("no NVIDIA device")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("CUDA is not available")


def test_gpu_trace_reports_placement_and_memory():
    _cuda()
    from gradsight.trace import run_traces

    clean, broken = run_traces([str(SCRIPTS / "cuda_targeted.py"), str(SCRIPTS / "step_before_backward.py")],
                               device="cuda", max_steps=3)
    assert clean["device"] == "cuda" and clean["error"] is None and clean["findings"] == []
    assert any(e["device"] and e["device"].startswith("cuda") for e in clean["events"])
    backward = [e for e in clean["events"] if e["kind"] == "backward"]
    assert backward and backward[0]["memory_before_backward"] > 0 and backward[0]["memory_after_backward"] > 0
    # The backward released the graph: the bytes freed, not before - after (the first backward also allocates
    # the gradients and the cuBLAS workspace, so memory after can exceed memory before: seen on an H200).
    assert backward[0]["memory_freed_by_backward"] > 0
    # The instrumentation finds the same mistakes on the GPU.
    assert [(f["code"], f["line"]) for f in broken["findings"]] == [("GS901", 14)]


def test_gpu_auto_device():
    _cuda()
    from gradsight.trace import run_trace

    r = run_trace(str(SCRIPTS / "cuda_targeted.py"), max_steps=2)
    assert r["device"] == "cuda" and r["error"] is None
