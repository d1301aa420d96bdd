"""Starts the real language server with the stub engine (and a stub tracer) patched in."""

import json
import pathlib
import re
import sys
import threading
import time
import types

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import stub_engine  # noqa: E402

import gradsight.analysis  # noqa: E402  (the server analyses through this façade)

gradsight.analysis.analyze_source = stub_engine.analyze_source

import gradsight.lsp.session  # noqa: E402

# A short analysis timeout, so a test can show that a runaway analysis does not hang requests.
gradsight.lsp.session.ANALYSIS_TIMEOUT = 2.0


def run_trace(path, *, function=None, device="auto", max_steps=20, timeout=60.0, memory_mb=4096, python=None,
              cwd=None, cancel: threading.Event | None = None):
    """Confirms every GS999 stub finding; `# stub: slow-trace` waits (up to 10 s) for cancellation."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    if "# stub: slow-trace" in text:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (cancel and cancel.is_set()):
            time.sleep(0.02)
        if cancel and cancel.is_set():
            return {"findings": [], "error": None, "events": [], "stopped": "cancelled"}
    analysis = stub_engine.analyze_source(text, path)
    findings = []
    for f in analysis.findings:
        if f.code == "GS999":
            data = f.to_json()
            data["message"] = "stub trace: .numpy() raised RuntimeError"
            data["source"] = "trace"
            findings.append(data)
    # A finding the static analysis did not have, on line 1 (with a fix under `# stub: trace-fix`).
    fix = None
    if "# stub: trace-fix" in text:
        fix = {"title": "Insert `.detach()` (stub)", "applicability": "safe",
               "edits": [{"line": 1, "column": 2, "end_line": 1, "end_column": 2, "new_text": ".detach()"}]}
    findings.append({"path": path, "line": 1, "column": 1, "end_line": 1, "end_column": 2, "code": "GS998",
                     "name": "stub-trace-only", "severity": "error", "message": "stub trace-only finding",
                     "related": [], "fix": fix, "source": "trace"})
    # `# stub: trace-other=NAME`: a finding on line 2 of NAME, next to the traced file (an error inside
    # an imported module's code).
    for other in re.findall(r"#\s*stub:\s*trace-other=(\S+)", text):
        findings.append({"path": str(pathlib.Path(path).parent / other), "line": 2, "column": 1, "end_line": 2,
                         "end_column": 3, "code": "GS997", "name": "stub-trace-elsewhere", "severity": "warning",
                         "message": "stub trace finding in another file", "related": [], "fix": None,
                         "source": "trace"})
    return {"findings": findings, "error": None, "events": [json.dumps({"kind": "done"})], "stopped": None}


if "--no-tracer" not in sys.argv:
    trace = types.ModuleType("gradsight.trace")
    trace.run_trace = run_trace
    sys.modules["gradsight.trace"] = trace
    import gradsight

    gradsight.trace = trace

from gradsight.lsp import main  # noqa: E402

sys.exit(main([a for a in sys.argv[1:] if a != "--no-tracer"]))
