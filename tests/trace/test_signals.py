"""Never left running: SIGINT / SIGTERM to `gradsight trace`, the cancel event of `run_trace` (what the
language server's cancel and shutdown use) and the death of the parent all end the traced script's whole
process group and remove its temporary folder (`gradsight-trace-*`).

Each test runs with its own TMPDIR, so "no folder left" is checked there and nothing leaks into /tmp.
The traced script forks a child that sleeps, then writes both process ids to a file and loops forever:
the test waits for that file (the script is then mid-run), acts, and checks that both processes are gone.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

pytestmark = pytest.mark.torch

SCRIPT = textwrap.dedent("""
    import os, sys, time
    import torch
    child = os.fork()
    if child == 0:
        time.sleep(1000)
        os._exit(0)
    x = torch.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    with open(os.environ["PIDS_FILE"] + ".tmp", "w") as fh:
        fh.write("%d %d" % (os.getpid(), child))
    os.replace(os.environ["PIDS_FILE"] + ".tmp", os.environ["PIDS_FILE"])
    while True:
        time.sleep(0.05)
""")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")  # a zombie has ended; only its parent's wait is missing
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _wait_for(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture
def setup(tmp_path):
    pytest.importorskip("torch")
    if os.name != "posix":
        pytest.skip("process groups are POSIX")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    script = tmp_path / "forever_training.py"
    script.write_text(SCRIPT, encoding="utf-8")
    pids = tmp_path / "pids"
    env = dict(os.environ, TMPDIR=str(tmpdir), PIDS_FILE=str(pids))
    return script, pids, tmpdir, env


def _read_pids(pids: pathlib.Path) -> list[int]:
    assert _wait_for(pids.exists, 120), "the traced script never started"
    return [int(p) for p in pids.read_text().split()]


def _left_folders(tmpdir: pathlib.Path) -> list[str]:
    return sorted(p.name for p in tmpdir.iterdir() if p.name.startswith("gradsight-trace-"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_cli_ends_group_and_removes_temp_folder(setup, sig):
    script, pids, tmpdir, env = setup
    cli = subprocess.Popen([sys.executable, "-m", "gradsight.trace.cli", str(script), "--device", "cpu",
                            "--timeout", "300"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        runner_pid, child_pid = _read_pids(pids)
        assert _alive(runner_pid) and _alive(child_pid)
        assert _left_folders(tmpdir), "the trace's temporary folder should exist while it runs"
        cli.send_signal(sig)
        out, err = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert cli.returncode == 128 + sig, (cli.returncode, err)
    assert b"interrupted by " + signal.Signals(sig).name.encode() in err
    assert _wait_for(lambda: not _alive(runner_pid) and not _alive(child_pid), 10)
    assert _left_folders(tmpdir) == []


def test_cancel_event_ends_group_and_removes_temp_folder(setup, monkeypatch):
    """The API the language server uses: `run_trace(..., cancel=event)`; setting the event ends the run."""
    script, pids, tmpdir, env = setup
    monkeypatch.setenv("PIDS_FILE", env["PIDS_FILE"])
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # make tempfile re-read TMPDIR
    from gradsight.trace import exit_code, run_trace

    cancel = threading.Event()
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", run_trace(str(script), device="cpu", timeout=300,
                                                                           cancel=cancel)))
    worker.start()
    try:
        runner_pid, child_pid = _read_pids(pids)
        assert _left_folders(tmpdir)
    finally:
        cancel.set()
        worker.join(60)
    assert not worker.is_alive()
    result = box["r"]
    assert result["stopped"] == "cancelled" and exit_code(result) == 2
    # SIGKILL was sent to the whole group before run_trace returned; the kernel ends the processes promptly.
    assert _wait_for(lambda: not _alive(runner_pid) and not _alive(child_pid), 10)
    assert _left_folders(tmpdir) == []


def test_parent_killed_outright_still_ends_the_trace(setup):
    """SIGKILL cannot be caught: the runner notices its parent is gone, kills its group and removes its folder."""
    script, pids, tmpdir, env = setup
    cli = subprocess.Popen([sys.executable, "-m", "gradsight.trace.cli", str(script), "--device", "cpu",
                            "--timeout", "300"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        runner_pid, child_pid = _read_pids(pids)
        cli.kill()
        cli.wait(10)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert _wait_for(lambda: not _alive(runner_pid) and not _alive(child_pid), 15)
    assert _wait_for(lambda: _left_folders(tmpdir) == [], 5)
