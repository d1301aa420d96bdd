"""The trace's sandbox: scripts that fork, never end, print megabytes, exhaust memory, call os._exit, ask
for input, live in odd paths, or run in an interpreter without torch.

The traces run concurrently from one module fixture (most of their time is the child's torch import or a
deliberate wait), and each test reads its own result.
"""

from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from gradsight.trace import TRACE_ERROR, exit_code, run_trace, run_traces

from trace_helpers import RESULT_KEYS, SCRIPTS

pytestmark = pytest.mark.torch

SOURCES = {
    "forever.py": """
        import torch
        x = torch.ones(3, requires_grad=True)
        while True:
            y = (x * 2).sum()
    """,
    "forks.py": """
        import os, sys, time
        import torch
        pid = os.fork()
        if pid == 0:
            time.sleep(1000)
            os._exit(0)
        with open(sys.argv[0] + ".pid", "w") as fh:
            fh.write(str(pid))
        x = torch.ones(3, requires_grad=True)
        (x * 2).sum().backward()
    """,
    "prints_lots.py": """
        import sys
        line = "x" * 1000 + "\\n"
        while True:
            sys.stdout.write(line)
    """,
    "prints_some.py": """
        import sys
        for i in range(2000):
            sys.stdout.write("y" * 1000 + "\\n")
            sys.stderr.write("e" * 100 + "\\n")
        import torch
        x = torch.randn(3, requires_grad=True)
        x.detach().sum().backward()
    """,
    "asks.py": """
        name = input("name? ")
    """,
    "exits.py": """
        import os
        import torch
        x = torch.randn(3, requires_grad=True)
        y = x.detach()
        os._exit(3)
    """,
    "hog.py": """
        import torch
        chunks = []
        for i in range(200):
            chunks.append(torch.ones(16 * 1024 * 1024))
    """,
}
ODD_DIR = "dir with spaces é"
ODD_NAME = "scrïpt ü.py"
ODD_SOURCE = """
    import torch
    x = torch.randn(3, requires_grad=True)
    z = x.detach()
    (z * 2).sum().backward()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = pathlib.Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _no_torch_python(tmp: pathlib.Path) -> str:
    """An interpreter that cannot import torch: this one with -S (no site-packages)."""
    exe = tmp / "python-no-torch"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    pytest.importorskip("torch")
    tmp = tmp_path_factory.mktemp("sandbox")
    paths = {}
    for name, src in SOURCES.items():
        p = tmp / name
        p.write_text(textwrap.dedent(src).lstrip("\n"), encoding="utf-8")
        paths[name] = str(p)
    odd = tmp / ODD_DIR
    odd.mkdir()
    (odd / ODD_NAME).write_text(textwrap.dedent(ODD_SOURCE).lstrip("\n"), encoding="utf-8")
    paths["odd"] = str(odd / ODD_NAME)
    cancel = threading.Event()

    def timed(fn, *a, **k):
        t0 = time.monotonic()
        r = fn(*a, **k)
        return r, time.monotonic() - t0

    jobs = {
        "forever": lambda: timed(run_trace, paths["forever.py"], timeout=6),
        "cancel": lambda: timed(run_trace, paths["forever.py"], timeout=120, cancel=cancel),
        "forks": lambda: timed(run_trace, paths["forks.py"], timeout=60),
        "prints_lots": lambda: timed(run_trace, paths["prints_lots.py"], timeout=60),
        "hog": lambda: timed(run_trace, paths["hog.py"], timeout=60, memory_mb=700),
        # One child for the quick ones; os._exit must come last, it ends the process.
        "batch": lambda: timed(run_traces, [paths["asks.py"], paths["prints_some.py"], paths["odd"],
                                            paths["exits.py"]], timeout=120),
        "no_torch": lambda: timed(run_trace, paths["asks.py"], python=_no_torch_python(tmp)),
        "no_python": lambda: timed(run_trace, paths["asks.py"], python=str(tmp / "no-such-python")),
        "function": lambda: timed(run_trace, str(SCRIPTS / "with_function.py"), function="train", device="cpu"),
        "function_missing": lambda: timed(run_trace, str(SCRIPTS / "with_function.py"), function="nope"),
        "cli_json": lambda: timed(subprocess.run, [sys.executable, "-m", "gradsight.trace.cli", paths["odd"],
                                                   "--output-format", "json", "--device", "cpu"],
                                  capture_output=True, text=True, timeout=120),
    }
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(job) for name, job in jobs.items()}
        time.sleep(1.0)
        threading.Timer(4.0, cancel.set).start()
        results = {name: f.result() for name, f in futures.items()}
    results["paths"] = paths
    return results


def test_endless_script_times_out(sandbox):
    r, elapsed = sandbox["forever"]
    assert r["stopped"] == "timeout" and set(r) == RESULT_KEYS
    assert elapsed < 6 + 10
    assert exit_code(r) == 2


def test_cancel_event_stops_the_trace(sandbox):
    r, elapsed = sandbox["cancel"]
    assert r["stopped"] == "cancelled"
    assert elapsed < 60


def test_forked_children_are_killed(sandbox):
    r, elapsed = sandbox["forks"]
    assert r["error"] is None and r["stopped"] is None and r["steps"] == 1
    assert elapsed < 30
    pid = int(pathlib.Path(sandbox["paths"]["forks.py"] + ".pid").read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)


def test_megabytes_of_output_stop_with_output_limit(sandbox):
    r, elapsed = sandbox["prints_lots"]
    assert r["stopped"] == "output-limit"
    assert elapsed < 60


def test_memory_limit(sandbox):
    r, _ = sandbox["hog"]
    assert r["stopped"] == "memory"
    assert not [f for f in r["findings"] if f["code"] == "GS900"]
    assert exit_code(r) == 2


def test_input_gets_a_clear_error(sandbox):
    r = sandbox["batch"][0][0]
    assert r["error"]["type"] == "EOFError"
    assert "asked for input()" in r["error"]["message"] and r["error"]["line"] == 1


def test_printing_some_output_is_fine(sandbox):
    r = sandbox["batch"][0][1]
    assert r["stopped"] is None
    assert [(f["code"], f["line"]) for f in r["findings"]] == [("GS903", 7)]


def test_path_with_spaces_and_non_ascii(sandbox):
    r = sandbox["batch"][0][2]
    assert r["error"]["line"] == 4
    assert {(f["code"], f["line"]) for f in r["findings"]} == {("GS903", 3), ("GS903", 4)}
    assert all(f["path"] == sandbox["paths"]["odd"] for f in r["findings"])


def test_os_exit_still_reports(sandbox):
    r = sandbox["batch"][0][3]
    assert r["error"] == {"type": "SystemExit", "message": "the script called os._exit(3)", "line": 5}


def test_interpreter_without_torch(sandbox):
    r, elapsed = sandbox["no_torch"]
    assert r["error"]["type"] == TRACE_ERROR and "torch is not importable" in r["error"]["message"]
    assert exit_code(r) == 2


def test_missing_interpreter(sandbox):
    r, _ = sandbox["no_python"]
    assert r["error"]["type"] == TRACE_ERROR and "cannot start" in r["error"]["message"]


def test_function_mode_imports_and_calls(sandbox):
    r, _ = sandbox["function"]
    # The module is imported (not run as __main__, whose block would raise SystemExit), then train() runs.
    assert r["error"]["type"] == "RuntimeError" and r["error"]["line"] == 11
    # The statement to change is the `with torch.no_grad():` (line 9); the op under it is in `related`.
    assert {(f["code"], f["line"]) for f in r["findings"]} == {("GS903", 9), ("GS903", 11)}
    assert 10 in {x["line"] for f in r["findings"] for x in f["related"]}


def test_missing_function(sandbox):
    r, _ = sandbox["function_missing"]
    assert r["error"]["type"] == TRACE_ERROR and "'nope'" in r["error"]["message"]
    assert exit_code(r) == 2


def test_cli_json_output(sandbox):
    proc, _ = sandbox["cli_json"]
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == RESULT_KEYS
    assert {f["line"] for f in data["findings"]} == {3, 4}


def test_cli_usage_errors(tmp_path):
    missing = subprocess.run([sys.executable, "-m", "gradsight.trace.cli", str(tmp_path / "nope.py")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    bad = subprocess.run([sys.executable, "-m", "gradsight.trace.cli", str(tmp_path / "nope.py"), "--device", "gpu"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
