"""A stand-in engine for end-to-end tests of the language server's plumbing.

The real engine (`gradsight.analysis.analyze_source`) decides *what* is reported; these tests check
*how* the server reports it (positions, versions, fixes, hovers, hints, notebooks), so they need
findings and facts that do not depend on how far the engine has got. `stub_server.py` starts the
real server with this function patched in. It adds, on top of the real engine's findings:

- GS999 `stub-numpy` (warning) on every `NAME.numpy()`, with a safe fix inserting `.detach()`
  and a related location at NAME's last assignment;
- a fact for every `NAME = ...` assignment target (a transition when the value is a call), and
  facts for `NAME.numpy()` and for NAME inside it (so hovers have nested facts to choose from).

Magic comments: `# stub: sleep=0.3` makes the analysis slow; `# stub: raise` prints to stdout and
raises.
"""

from __future__ import annotations

import re
import time

from gradsight.engine.api import Analysis, StateFact
from gradsight.analysis import analyze_source as real_analyze
from gradsight.findings import Applicability, Edit, Finding, Fix, Related, Severity

_NUMPY = re.compile(r"\b([A-Za-z_]\w*)\.numpy\(\)")
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(.*)$")
_SLEEP = re.compile(r"#\s*stub:\s*sleep=([0-9.]+)")


def analyze_source(text, path="<stdin>", config=None, workspace=None):
    if "# stub: raise" in text:
        print("stub engine: a stray print to stdout")  # must not corrupt the LSP channel
        raise RuntimeError("stub engine asked to raise")
    if m := _SLEEP.search(text):
        time.sleep(float(m.group(1)))
    base = real_analyze(text, path, config, workspace=workspace)
    result = Analysis(path=path, findings=list(base.findings), facts=list(base.facts), problems=list(base.problems))
    assigned: dict[str, int] = {}
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, line in enumerate(lines, start=1):
        if m := _ASSIGN.match(line):
            name, value = m.group(1), m.group(2)
            assigned[name] = number
            result.facts.append(StateFact(
                line=number, column=1, end_line=number, end_column=1 + len(name), name=name,
                summary=f"stub: {name} is assigned here", label="stub-grad",
                chain=((number, f"{name} assigned"),), transition="(" in value))
        for m in _NUMPY.finditer(line):
            name = m.group(1)
            start, end = m.start() + 1, m.end() + 1  # 1-based code points, end exclusive
            chain = ((assigned[name], f"{name} assigned"),) if name in assigned else ()
            result.facts.append(StateFact(number, start, number, end, f"{name}.numpy()",
                                          f"stub: {name}.numpy() leaves autograd", "stub-np", chain, True))
            result.facts.append(StateFact(number, start, number, start + len(name), name,
                                          f"stub: {name} requires grad", "stub-grad", chain, False))
            if config is not None and not config.is_enabled("GS999"):
                continue
            severity = config.severity_for("GS999", Severity.WARNING) if config is not None else Severity.WARNING
            related = (Related(path, assigned[name], 1, f"{name} gets its history here"),) if name in assigned else ()
            insert_at = start + len(name)
            fix = Fix(title=f"Call `{name}.detach()` before `.numpy()`", applicability=Applicability.SAFE,
                      edits=(Edit(number, insert_at, number, insert_at, ".detach()"),))
            result.findings.append(Finding(path, number, start, number, end, "GS999", "stub-numpy", severity,
                                           f"stub: `{name}.numpy()` on a tensor that requires grad", related, fix))
    return result
