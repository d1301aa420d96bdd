"""`gradsight trace`: run a script under autograd instrumentation and report confirmed problems.

This is the parent side. It never imports torch: it starts ``runner.py`` (stdlib + torch only) in the
user's interpreter, in its own process group, and watches it:

* wall-clock timeout and a cancel event kill the whole process group (the runner first gets SIGTERM and
  a short grace period to write what it found);
* memory: the runner caps its private memory with RLIMIT_DATA (RLIMIT_AS would break CUDA's address-space
  reservations), and the parent polls the group's RSS and kills it past the limit;
* stdout and stderr are drained continuously by threads that keep only the last 64 KiB each, so a script
  that prints megabytes can neither fill memory nor block on a full pipe; past ``OUTPUT_LIMIT`` bytes in
  all the run is stopped ("output-limit");
* the result comes back through a JSON file, never stdout, which belongs to the script.

Invariant: the tracer runs in a child process, never in the caller (the language server included).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

__all__ = ["run_trace", "run_traces", "format_text", "exit_code", "relativize", "finding_sort_key",
           "TRACE_ERROR", "RUNNER"]

log = logging.getLogger(__name__)

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")
TRACE_ERROR = "GradsightTraceError"  # error type for "the trace could not run" (not the script's exception)
TAIL_BYTES = 64 * 1024
OUTPUT_LIMIT = 64 * 1024 * 1024
RESULT_LIMIT = 32 * 1024 * 1024
GRACE_SECONDS = 2.0
POLL_SECONDS = 0.05
RSS_POLL_SECONDS = 0.25

_KEYS = ("findings", "error", "events", "device", "steps", "stopped")
_FINDING_KEYS = ("path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message",
                 "related", "fix", "source")


def _empty(device: str = "none") -> dict[str, Any]:
    return {"findings": [], "error": None, "events": [], "device": device, "steps": 0, "stopped": None,
            "stdout": "", "stderr": "", "traceback": None, "internal_errors": []}


def _trace_error(message: str, stopped: str | None = None) -> dict[str, Any]:
    out = _empty()
    out["error"] = {"type": TRACE_ERROR, "message": message, "line": None}
    out["stopped"] = stopped
    return out


SCRIPT_MARK = b"\n\x00gradsight-trace: end of script\x00\n"  # the runner writes it after each script of a batch
TAIL_LINES = 40
TAIL_CHARS = 8000


class _Tail:
    """Drains one pipe on a thread, keeping the last `TAIL_BYTES` bytes of each script's output and counting
    the total. In batch mode the runner writes `SCRIPT_MARK` after each script, which starts a new segment."""

    def __init__(self, stream, counter: list[int], lock: threading.Lock):
        self.stream = stream
        self.segments: list[bytearray] = [bytearray()]
        self.counter = counter
        self.lock = lock
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def buf(self) -> bytearray:
        return self.segments[-1]

    def _run(self) -> None:
        fd = self.stream.fileno()
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                with self.lock:
                    self.counter[0] += len(chunk)
                self._add(chunk)
        except OSError:
            pass

    def _add(self, chunk: bytes) -> None:
        buf = self.segments[-1]
        start = max(0, len(buf) - len(SCRIPT_MARK))
        buf += chunk
        while True:
            i = buf.find(SCRIPT_MARK, start)
            if i < 0:
                break
            rest = buf[i + len(SCRIPT_MARK):]
            del buf[i:]
            buf = bytearray(rest)
            self.segments.append(buf)
            start = 0
        if len(buf) > 2 * TAIL_BYTES:
            del buf[: len(buf) - TAIL_BYTES]

    def text(self, segment: int | None = None) -> str:
        buf = self.segments[-1 if segment is None else segment] if (
            segment is None or segment < len(self.segments)) else bytearray()
        return bytes(buf[-TAIL_BYTES:]).decode("utf-8", "replace")

    def last_lines(self, segment: int) -> str:
        """The script's last output lines (at most TAIL_LINES lines, TAIL_CHARS characters)."""
        text = self.text(segment)
        lines = text.splitlines()[-TAIL_LINES:]
        out = "\n".join(lines)
        return out[-TAIL_CHARS:]


def _group_rss_bytes(pgid: int) -> int:
    """Resident memory of every process in the group (Linux /proc; 0 where unavailable)."""
    total = 0
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read()
            # Fields after the parenthesised command name; pgrp is the 3rd of them.
            fields = stat[stat.rindex(b")") + 2:].split()
            if int(fields[2]) != pgid:
                continue
            with open(f"/proc/{pid}/statm", "rb") as fh:
                total += int(fh.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
    return total


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, sig)
        elif sig != signal.SIGTERM:
            proc.kill()
        else:
            proc.terminate()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def run_trace(path: str, *, function: str | None = None, device: str = "auto", max_steps: int = 20,
              timeout: float = 60.0, memory_mb: int = 4096, python: str | None = None, cwd: str | None = None,
              cancel: threading.Event | None = None) -> dict:
    """Trace `path` in a child process and return the result object (see docs/trace.md).

    Never raises for problems of the script or the child: those come back in "error" (type
    ``TRACE_ERROR`` when the trace itself could not run) and "stopped".
    """
    return run_traces([path], function=function, device=device, max_steps=max_steps, timeout=timeout,
                      memory_mb=memory_mb, python=python, cwd=cwd, cancel=cancel)[0]


def run_traces(paths: list[str], *, function: str | None = None, device: str = "auto", max_steps: int = 20,
               timeout: float = 60.0, memory_mb: int = 4096, python: str | None = None, cwd: str | None = None,
               cancel: threading.Event | None = None) -> list[dict]:
    """Trace several scripts one after another in ONE child process (torch is imported once).

    The scripts share that interpreter (modules they import, torch's global settings beyond grad mode and
    anomaly mode), and `timeout` and `memory_mb` bound the whole batch. Use `run_trace` for isolation.
    """
    if device not in ("auto", "cpu", "cuda"):
        return [_trace_error(f"unknown device {device!r}; use auto, cpu or cuda") for _ in paths]
    scripts = [os.path.abspath(p) for p in paths]
    results: list[dict | None] = [None] * len(scripts)
    todo = []
    for i, script in enumerate(scripts):
        if not os.path.isfile(script):
            results[i] = _trace_error(f"no such file: {paths[i]}")
        else:
            todo.append(i)
    python = python or sys.executable
    workdir = os.path.abspath(cwd) if cwd else os.getcwd()
    if todo and not os.path.isdir(workdir):
        for i in todo:
            results[i] = _trace_error(f"no such directory: {cwd}")
        todo = []
    if todo:
        got = _launch([scripts[i] for i in todo], function, device, max_steps, timeout, memory_mb, python,
                      workdir, cancel)
        for i, r in zip(todo, got):
            results[i] = r
    return [r if r is not None else _trace_error("not traced") for r in results]


def _launch(scripts, function, device, max_steps, timeout, memory_mb, python, workdir, cancel) -> list[dict]:
    tmp = tempfile.mkdtemp(prefix="gradsight-trace-")
    try:
        # A private copy: the child's sys.path[0] is then a folder holding nothing importable of ours.
        runner = os.path.join(tmp, "gradsight_trace_runner.py")
        shutil.copyfile(RUNNER, runner)
        outdir = os.path.join(tmp, "results")
        os.mkdir(outdir)
        cmd = [python, runner, "--results-dir", outdir, "--device", device, "--max-steps", str(int(max_steps)),
               "--memory-mb", str(int(memory_mb or 0))]
        if function:
            cmd += ["--function", function]
        cmd += ["--", *scripts]
        env = dict(os.environ)
        env.setdefault("PYTHONIOENCODING", "utf-8:backslashreplace")
        env["GRADSIGHT_TRACE"] = "1"
        env.pop("PYTHONINSPECT", None)
        # The VS Code extension puts its bundled libraries first on PYTHONPATH for the *server*; the user's
        # script must see the user's own packages, so drop that entry (named by GRADSIGHT_BUNDLED_LIBS).
        bundled = env.pop("GRADSIGHT_BUNDLED_LIBS", None)
        if bundled:
            env.pop("PYTHONSAFEPATH", None)  # set by the extension for the server only
        if bundled and env.get("PYTHONPATH"):
            keep = [p for p in env["PYTHONPATH"].split(os.pathsep)
                    if p and os.path.normcase(os.path.abspath(p)) != os.path.normcase(os.path.abspath(bundled))]
            if keep:
                env["PYTHONPATH"] = os.pathsep.join(keep)
            else:
                env.pop("PYTHONPATH")
        outputs = [os.path.join(outdir, f"{i}.json") for i in range(len(scripts))]
        return _supervise(cmd, env, workdir, outputs, timeout, memory_mb, cancel, python)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _supervise(cmd, env, workdir, outputs, timeout, memory_mb, cancel, python) -> list[dict]:
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=workdir, env=env, start_new_session=(os.name == "posix"))
    except OSError as exc:
        return [_trace_error(f"cannot start the interpreter {python!r}: {exc}") for _ in outputs]
    counter = [0]
    lock = threading.Lock()
    out_tail = _Tail(proc.stdout, counter, lock)
    err_tail = _Tail(proc.stderr, counter, lock)
    reason = None
    try:
        reason = _watch(proc, timeout, memory_mb, cancel, counter)
    except BaseException:
        # KeyboardInterrupt or any other interruption of the caller: the child must not outlive it.
        reason = "cancelled"
        _stop_group(proc, reason)
        raise
    finally:
        if reason is not None:
            _stop_group(proc, reason)
        # Reap whatever the script left behind (forked children, daemons in the same group).
        _kill_group(proc, signal.SIGKILL)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        for tail in (out_tail, err_tail):
            tail.thread.join(2.0)
        for stream in (proc.stdout, proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    limit_bytes = int(memory_mb) * 1024 * 1024 if memory_mb and memory_mb > 0 else None
    results = []
    missing_reported = False
    for index, output in enumerate(outputs):
        result = _read_result(output)
        if result is None:
            code = proc.returncode
            if reason is not None:
                result = _empty()
                result["stopped"] = reason
            elif code == -signal.SIGKILL and limit_bytes:
                result = _empty()  # most likely the kernel's OOM killer
                result["stopped"] = "memory"
            elif missing_reported:
                result = _trace_error("not traced: the process ended before reaching this script")
            else:
                missing_reported = True
                how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
                tail = (err_tail.text(index) or out_tail.text(index)).strip()[-2000:]
                msg = f"the traced process {how} before writing a result"
                result = _trace_error(msg + (f"; its last output:\n{tail}" if tail else ""))
        elif reason is not None and result.get("stopped") == "timeout":
            # The runner only knows it was told to stop; the parent knows why.
            result["stopped"] = reason
        internal = result.get("internal_errors")
        if internal:
            log.warning("gradsight trace: internal errors in the runner: %s", internal)
        result["stdout"] = out_tail.last_lines(index)
        result["stderr"] = err_tail.last_lines(index)
        results.append(_normalize(result))
    return results


def _watch(proc, timeout, memory_mb, cancel, counter) -> str | None:
    """Wait for the child; the reason to stop it early, or None when it ended by itself."""
    start = time.monotonic()
    deadline = start + timeout if timeout and timeout > 0 else None
    limit_bytes = int(memory_mb) * 1024 * 1024 if memory_mb and memory_mb > 0 else None
    next_rss = start
    while proc.poll() is None:
        now = time.monotonic()
        if cancel is not None and cancel.is_set():
            return "cancelled"
        if deadline is not None and now >= deadline:
            return "timeout"
        if counter[0] > OUTPUT_LIMIT:
            return "output-limit"
        if limit_bytes and now >= next_rss:
            next_rss = now + RSS_POLL_SECONDS
            # Some slack over the child's own RLIMIT_DATA before killing from outside.
            if _group_rss_bytes(proc.pid) > limit_bytes * 1.25 + 256 * 1024 * 1024:
                return "memory"
        try:
            proc.wait(POLL_SECONDS)
        except subprocess.TimeoutExpired:
            pass
    return None


def _stop_group(proc, reason: str) -> None:
    """Ask the runner to stop and write what it has (SIGTERM), then give it a short grace period; the
    caller kills the whole group afterwards."""
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
    except OSError:
        pass
    grace = 0.5 if reason in ("memory", "output-limit") else GRACE_SECONDS
    try:
        proc.wait(grace)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        pass


def _read_result(path: str) -> dict | None:
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    if size > RESULT_LIMIT:
        out = _trace_error(f"the trace result is too large ({size} bytes)")
        out["stopped"] = "output-limit"
        return out
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _normalize(result: dict) -> dict:
    out = _empty(str(result.get("device") or "none"))
    out["steps"] = int(result.get("steps") or 0)
    out["stopped"] = result.get("stopped")
    err = result.get("error")
    if isinstance(err, dict):
        out["error"] = {"type": str(err.get("type") or "Error"), "message": str(err.get("message") or ""),
                        "line": err.get("line") if isinstance(err.get("line"), int) else None}
    findings = []
    for f in result.get("findings") or ():
        if isinstance(f, dict) and all(k in f for k in _FINDING_KEYS):
            g = {k: f[k] for k in _FINDING_KEYS}
            g["confirms"] = _confirms(g)
            findings.append(g)
    out["findings"] = findings
    out["events"] = [e for e in (result.get("events") or ()) if isinstance(e, dict)]
    # New keys (the original six are unchanged): the script's own output and traceback, and the runner's
    # internal errors (expected empty; tests require it).
    out["stdout"] = str(result.get("stdout") or "")
    out["stderr"] = str(result.get("stderr") or "")
    tb = result.get("traceback")
    out["traceback"] = str(tb) if tb else None
    out["internal_errors"] = [str(e) for e in (result.get("internal_errors") or ())]
    return out


def _confirms(finding: dict) -> list[str]:
    """The static rule codes this trace finding confirms (new key "confirms"; see docs/trace.md): the editor
    marks a static finding of one of these codes on the same line as confirmed."""
    from .codes import CONFIRMS

    code = finding.get("code")
    if code == "GS900":
        # Only the non-scalar backward error is a static rule's (GS403); other exceptions confirm nothing.
        msg = finding.get("message") or ""
        return ["GS403"] if "implicitly created only for scalar outputs" in msg else []
    return list(CONFIRMS.get(code, ()))


def exit_code(result: dict) -> int:
    """0: ran and found nothing; 1: findings or the script raised; 2: the trace could not run."""
    err = result.get("error")
    if err and err.get("type") == TRACE_ERROR:
        return 2
    if result.get("findings"):
        return 1
    if result.get("stopped") in ("timeout", "memory", "cancelled", "output-limit"):
        return 2  # the run was cut short and found nothing: no verdict
    return 1 if err else 0


_STOPPED_TEXT = {
    "max-steps": "stopped after the step limit (--max-steps)",
    "timeout": "stopped: the time limit ran out (--timeout)",
    "memory": "stopped: the memory limit was reached (--memory-mb)",
    "cancelled": "cancelled",
    "output-limit": "stopped: the script printed too much output",
}


def _finding_lines(f: dict) -> list[str]:
    # The layout of `gradsight check`'s text output, so editors and CI parse both alike.
    lines = [f"{f['path']}:{f['line']}:{f['column']}: {f['code']} {f['severity']}: {f['message']}"]
    for r in f.get("related") or ():
        lines.append(f"    {r['path']}:{r['line']}:{r['column']}: note: {r['message']}")
    return lines


def format_text(result: dict) -> str:
    """A human-readable report: the findings (as `gradsight check` prints them, in its order), the script's
    last output and traceback, its error and a summary line."""
    lines: list[str] = []
    for f in sorted(result.get("findings") or (), key=finding_sort_key):
        lines.extend(_finding_lines(f))
    err = result.get("error")
    if err and err.get("type") == TRACE_ERROR:
        lines.append(f"gradsight trace: {err.get('message')}")
        return "\n".join(lines) + "\n"
    for key, title in (("stdout", "the script's last output (stdout)"), ("stderr", "the script's last output (stderr)")):
        text = (result.get(key) or "").rstrip()
        if key == "stderr" and result.get("traceback"):
            # The traceback is printed below on its own; do not print it twice.
            text = text.replace(result["traceback"].rstrip(), "").rstrip()
        if text:
            lines.append(f"--- {title} ---")
            lines.extend(text.splitlines())
    if result.get("traceback"):
        lines.append("--- the script's traceback ---")
        lines.extend(result["traceback"].rstrip().splitlines())
    if err:
        where = f" at line {err['line']}" if err.get("line") else ""
        lines.append(f"the script raised {err.get('type')}{where}: {err.get('message')}")
    n = len(result.get("findings") or ())
    summary = (f"traced on {result.get('device')}: {result.get('steps', 0)} step(s), "
               f"{n} finding{'s' if n != 1 else ''}")
    stopped = result.get("stopped")
    if stopped:
        summary += "; " + _STOPPED_TEXT.get(stopped, f"stopped ({stopped})")
    lines.append(summary)
    return "\n".join(lines) + "\n"


def finding_sort_key(f: dict) -> tuple:
    """`gradsight check`'s order (gradsight.findings.sort_key): path, line, column, code."""
    return (f.get("path") or "", f.get("line") or 0, f.get("column") or 0, f.get("code") or "")


def relativize(result: dict, base: str | None = None) -> dict:
    """A copy of `result` with the paths under `base` (default: the current folder) made relative, as
    `gradsight check` prints them. `run_trace` itself returns absolute paths (the language server needs them)."""
    base = os.path.abspath(base or os.getcwd())

    def rel(path: str) -> str:
        if not path or not os.path.isabs(path):
            return path
        try:
            r = os.path.relpath(path, base)
        except ValueError:  # another drive on Windows
            return path
        return path if r.startswith(os.pardir) else r

    out = dict(result)
    findings = []
    for f in result.get("findings") or ():
        g = dict(f)
        g["path"] = rel(f["path"])
        g["related"] = [dict(r, path=rel(r["path"])) for r in f.get("related") or ()]
        findings.append(g)
    out["findings"] = sorted(findings, key=finding_sort_key)
    tb = result.get("traceback")
    if tb:
        prefix = base.rstrip(os.sep) + os.sep
        out["traceback"] = tb.replace(f'File "{prefix}', 'File "')
    return out
