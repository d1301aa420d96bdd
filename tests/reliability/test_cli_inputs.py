"""`gradsight check` on files that are not clean UTF-8 Python: a clear message per file, no traceback, and
the rest of the run goes on (its findings are still reported, in every output format)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

GRADSIGHT = [sys.executable, "-m", "gradsight"]
GOOD = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n"


def check(cwd: pathlib.Path, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADSIGHT, "check", *args, "--no-cache"], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, errors="replace")


@pytest.fixture(scope="module")
def odd_tree(tmp_path_factory) -> pathlib.Path:
    d = tmp_path_factory.mktemp("odd")
    (d / "good.py").write_text(GOOD)
    (d / "latin1.py").write_bytes("# -*- coding: latin-1 -*-\nimport torch\nx = torch.ones(2, requires_grad=True)\n"
                                  "café = 'é'; y = x.numpy()\n".encode("latin-1"))
    (d / "utf8_bom.py").write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    (d / "crlf.py").write_bytes(GOOD.replace("\n", "\r\n").encode())
    (d / "utf16.py").write_bytes(GOOD.encode("utf-16"))  # BOM + UTF-16: not a Python source encoding
    (d / "invalid_utf8.py").write_bytes(b"import torch\ns = '\xff\xfe'\n" + GOOD.encode())
    (d / "binary.py").write_bytes(bytes(range(256)) * 8)
    (d / "bad_cookie.py").write_bytes(b"# coding: klingon\n" + GOOD.encode())
    (d / "latin1_no_cookie.py").write_bytes("# café\n".encode("latin-1") + GOOD.encode())
    (d / "empty.py").write_bytes(b"")
    (d / "only_bom.py").write_bytes(b"\xef\xbb\xbf")
    (d / "pkg.py").mkdir()  # a directory with a .py name
    (d / "pkg.py" / "inner.py").write_text(GOOD)
    os.symlink(d / "nowhere" / "gone.py", d / "dangling.py")
    return d


SKIPPED = ["utf16.py", "invalid_utf8.py", "binary.py", "bad_cookie.py", "latin1_no_cookie.py", "dangling.py"]
FOUND = ["good.py", "latin1.py", "utf8_bom.py", "crlf.py", "pkg.py/inner.py"]


@pytest.mark.parametrize("fmt", ["json", "text", "sarif", "github"])
def test_odd_files_get_a_message_and_the_run_goes_on(odd_tree, fmt):
    proc = check(odd_tree, ".", "--output-format", fmt)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    for name in SKIPPED:
        assert any(line.startswith(f"gradsight: {name}:") for line in proc.stderr.splitlines()), \
            f"no message for {name}:\n{proc.stderr}"
    for name in FOUND:
        assert name in proc.stdout, f"{name}'s finding is missing from the {fmt} output"
    assert proc.returncode == 1  # findings; unreadable files found by a walk are not usage errors


def test_json_positions_in_odd_encodings(odd_tree):
    proc = check(odd_tree, "latin1.py", "utf8_bom.py", "crlf.py", "--output-format", "json")
    assert proc.returncode == 1, proc.stderr
    found = {f["path"]: f for f in json.loads(proc.stdout)}
    # Columns count code points of the decoded text: "café = 'é'; y = x.numpy()" has x at column 17.
    assert (found["latin1.py"]["line"], found["latin1.py"]["column"]) == (4, 17)
    assert (found["utf8_bom.py"]["line"], found["utf8_bom.py"]["column"]) == (3, 5)  # the BOM is not a column
    assert (found["crlf.py"]["line"], found["crlf.py"]["column"]) == (3, 5)


def test_named_missing_path_is_an_error_but_the_rest_runs(odd_tree):
    proc = check(odd_tree, "good.py", "no/such/file.py", "binary.py", "--output-format", "json")
    assert "Traceback" not in proc.stderr
    assert "no/such/file.py" in proc.stderr and "binary.py" in proc.stderr
    assert [f["path"] for f in json.loads(proc.stdout)] == ["good.py"]
    assert proc.returncode == 2  # a path that does not exist is a usage error


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any file")
def test_permission_denied(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    locked = tmp_path / "locked.py"
    locked.write_text(GOOD)
    locked.chmod(0)
    try:
        proc = check(tmp_path, ".", "--output-format", "json")
    finally:
        locked.chmod(0o644)
    assert "Traceback" not in proc.stderr
    assert "locked.py" in proc.stderr
    assert [f["path"] for f in json.loads(proc.stdout)] == ["good.py"]


def test_parallel_run_with_odd_files(tmp_path):
    # 30 files take the process-pool path (PARALLEL_MIN_FILES = 24).
    for i in range(24):
        (tmp_path / f"good{i:02d}.py").write_text(GOOD)
    for i in range(3):
        (tmp_path / f"binary{i}.py").write_bytes(b"\x00\x01" * 100)
        (tmp_path / f"invalid{i}.py").write_bytes(b"x = '\xff'\n")
    proc = check(tmp_path, ".", "--output-format", "json", "--jobs", "2")
    assert "Traceback" not in proc.stderr
    assert len(json.loads(proc.stdout)) == 24
    lines = proc.stderr.splitlines()
    assert sum(ln.startswith("gradsight: binary") for ln in lines) == 3
    assert sum(ln.startswith("gradsight: invalid") for ln in lines) == 3
