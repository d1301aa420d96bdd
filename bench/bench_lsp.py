"""Benchmark gradsight's language server the way an editor drives it, over stdio.

    .venv/bin/python bench/bench_lsp.py            # everything (about a minute)
    .venv/bin/python bench/bench_lsp.py --quick    # fewer repetitions, skips the whole-corpus RSS step
    .venv/bin/python bench/bench_lsp.py --server "python -m some_other_server"   # any LSP server
    .venv/bin/python bench/bench_lsp.py --startup 5   # cold starts on a small script: initialize, first diagnostics
    .venv/bin/python bench/bench_lsp.py --typing-during-walk   # typing latency while diagnosticMode=workspace walks

It starts `python -m gradsight lsp` with a small hand-written JSON-RPC client (plain LSP 3.17, no
gradsight-specific messages) and measures, on the largest corpus files (timm vision_transformer.py,
transformers modeling_llama.py, torch nn/functional.py):

* server start -> first diagnostics for the first opened file;
* didOpen -> diagnostics for each file (first open, then the median of re-opens with a changed
  trailing comment, so that no content cache can answer);
* a one-character didChange on vision_transformer.py -> the diagnostics for that version (median of 20);
* hover at tensor names (median of 50 requests), inlay hints for a 60-line range (median of 20);
* the server's resident memory (VmRSS / VmHWM from /proc) after opening the whole corpus.

Diagnostics are taken the way the server offers them: pulled with `textDocument/diagnostic` when
it advertises `diagnosticProvider`, otherwise waited for as `textDocument/publishDiagnostics`
(matching the document version when the server sends one). This prints numbers and a targets
table; it asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tokenize

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import corpus  # noqa: E402

REPO = corpus.BENCH.parent
BIG_FILES = (
    "timm/timm/models/vision_transformer.py",
    "transformers/transformers/models/llama/modeling_llama.py",
    "torch/torch/nn/functional.py",
)
TENSOR_NAMES = {"x", "q", "k", "v", "attn", "hidden_states", "attn_output", "attn_weights", "logits",
                "query_states", "key_states", "value_states", "input", "weight", "out", "loss"}


class LspError(RuntimeError):
    pass


class Client:
    """A minimal synchronous LSP client: one reader thread, requests wait on a condition."""

    def __init__(self, argv: list[str], cwd: pathlib.Path, stderr_path: pathlib.Path):
        self._stderr = stderr_path.open("wb")
        self.t_start = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     cwd=cwd, bufsize=0)
        self._cond = threading.Condition()
        self._next_id = 0
        self._responses: dict[int, tuple[float, dict]] = {}
        self.diagnostics: list[tuple[float, str, int | None, int]] = []  # (arrival, uri, version, count)
        self.server_requests: list[str] = []
        self.closed = False
        self._wlock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- wire -----------------------------------------------------------------------------------
    def _send(self, msg: dict) -> None:
        body = json.dumps(msg, separators=(",", ":")).encode("utf-8")
        with self._wlock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read_loop(self) -> None:
        stream = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        raise EOFError
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                if length is None:
                    continue
                body = b""
                while len(body) < length:
                    chunk = stream.read(length - len(body))
                    if not chunk:
                        raise EOFError
                    body += chunk
                now = time.perf_counter()
                self._dispatch(json.loads(body), now)
        except (EOFError, OSError, ValueError):
            pass
        finally:
            with self._cond:
                self.closed = True
                self._cond.notify_all()

    def _dispatch(self, msg: dict, now: float) -> None:
        if "method" in msg and "id" in msg:  # a request from the server: answer like a plain editor
            method = msg["method"]
            self.server_requests.append(method)
            if method == "workspace/configuration":
                result = [None for _ in msg.get("params", {}).get("items", [])]
            elif method == "workspace/workspaceFolders":
                result = [{"uri": self.root_uri, "name": "corpus"}]
            else:  # client/registerCapability, window/workDoneProgress/create, refresh requests, ...
                result = None
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            return
        if "method" in msg:
            if msg["method"] == "textDocument/publishDiagnostics":
                p = msg.get("params", {})
                with self._cond:
                    self.diagnostics.append((now, p.get("uri"), p.get("version"), len(p.get("diagnostics", []))))
                    self._cond.notify_all()
            return
        with self._cond:
            self._responses[msg.get("id")] = (now, msg)
            self._cond.notify_all()

    # -- API ------------------------------------------------------------------------------------
    root_uri = ""
    last_arrival = 0.0

    def request(self, method: str, params, timeout: float = 30.0) -> tuple[object, float]:
        """Send a request; returns (result, seconds until the response arrived)."""
        with self._cond:
            self._next_id += 1
            rid = self._next_id
        t0 = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        with self._cond:
            self._cond.wait_for(lambda: rid in self._responses or self.closed, timeout)
            if rid not in self._responses:
                raise LspError(f"{method}: {'server exited' if self.closed else f'no answer in {timeout} s'}")
            t1, msg = self._responses.pop(rid)
        self.last_arrival = t1
        if "error" in msg:
            raise LspError(f"{method}: {msg['error'].get('message')}")
        return msg.get("result"), t1 - t0

    def notify(self, method: str, params) -> float:
        t0 = time.perf_counter()
        self._send({"jsonrpc": "2.0", "method": method, "params": params})
        return t0

    def diag_mark(self) -> int:
        with self._cond:
            return len(self.diagnostics)

    def wait_diagnostics(self, uri: str, since: int, version: int | None, timeout: float = 30.0) -> float:
        """Arrival time of the first publishDiagnostics for uri after mark `since` (matching version if sent)."""
        def find():
            for t, u, v, _ in self.diagnostics[since:]:
                if u == uri and (v is None or version is None or v == version):
                    return t
            return None

        with self._cond:
            self._cond.wait_for(lambda: find() is not None or self.closed, timeout)
            t = find()
        if t is None:
            raise LspError(f"no diagnostics for {uri.rsplit('/', 1)[-1]} (version {version}) in {timeout} s")
        return t

    def shutdown(self) -> None:
        try:
            if not self.closed:
                self.request("shutdown", None, timeout=10)
                self.notify("exit", None)
            self.proc.wait(timeout=10)
        except (LspError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()


def rss_mib(pid: int) -> tuple[float | None, float | None]:
    """(VmRSS, VmHWM) of a process in MiB, from /proc."""
    try:
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None, None
    vals = {}
    for line in status.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            vals[key] = int(rest.split()[0]) / 1024
    return vals.get("VmRSS"), vals.get("VmHWM")


def utf16_col(line: str, col: int) -> int:
    return len(line[:col].encode("utf-16-le")) // 2


def tensor_positions(text: str, limit: int) -> list[tuple[int, int]]:
    """Up to `limit` (0-based line, UTF-16 column) positions of tensor-looking names, spread over the file."""
    lines = text.splitlines()
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and tok.string in TENSOR_NAMES:
                row, col = tok.start
                found.append((row - 1, utf16_col(lines[row - 1], col)))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    if len(found) <= limit:
        return found
    step = len(found) / limit
    return [found[int(i * step)] for i in range(limit)]


def forward_range(text: str, span: int = 60) -> tuple[int, int]:
    """A 60-line range starting at the first `def forward` (or the file's middle)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.lstrip().startswith("def forward")), len(lines) // 2)
    return start, min(len(lines), start + span)


def median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


class Bench:
    def __init__(self, argv: list[str], quick: bool, timeout: float, big_files=BIG_FILES, verbose: bool = True):
        self.argv = argv
        self.big_files = tuple(big_files)
        self.verbose = verbose
        self.t0 = time.perf_counter()
        self.quick = quick
        self.timeout = timeout
        self.rows: dict[str, object] = {}
        self.notes: list[str] = []
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    # -- helpers --------------------------------------------------------------------------------
    def open_doc(self, c: Client, uri: str, text: str, version: int = 1) -> float:
        self.versions[uri] = version
        self.texts[uri] = text
        return c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                  "version": version, "text": text}})

    def diagnostics_after(self, c: Client, uri: str, mark: int, sent: float) -> float:
        """Seconds from `sent` until diagnostics for the current version of uri are available."""
        if self.pull:
            c.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, self.timeout)
            return c.last_arrival - sent
        t = c.wait_diagnostics(uri, mark, self.versions.get(uri), self.timeout)
        return t - sent

    def close_doc(self, c: Client, uri: str) -> None:
        """didClose, then give a server that clears diagnostics on close a moment to do so."""
        mark = c.diag_mark()
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        if not self.pull:
            try:
                c.wait_diagnostics(uri, mark, None, timeout=0.2)
            except LspError:
                pass

    # -- the run --------------------------------------------------------------------------------
    def progress(self, msg: str) -> None:
        if self.verbose:
            print(f"  [{time.perf_counter() - self.t0:7.1f} s] {msg}", file=sys.stderr, flush=True)

    def run(self) -> int:
        files = [corpus.CORPUS / f for f in self.big_files]
        missing = [f for f in files if not f.is_file()]
        if missing:
            raise SystemExit(f"corpus files missing: {missing}")
        with tempfile.TemporaryDirectory() as tmp:
            stderr_path = pathlib.Path(tmp) / "server.stderr"
            c = Client(self.argv, REPO, stderr_path)
            c.root_uri = corpus.CORPUS.as_uri()
            try:
                return self._run(c, files)
            except LspError as exc:
                err = stderr_path.read_text(errors="replace")[-3000:] if stderr_path.exists() else ""
                print(f"error: {exc}\n--- server stderr (tail) ---\n{err}", file=sys.stderr)
                self.print_report()
                return 1
            finally:
                c.shutdown()

    def _run(self, c: Client, files: list[pathlib.Path]) -> int:
        caps = {
            "textDocument": {
                "synchronization": {"dynamicRegistration": False, "didSave": True},
                "publishDiagnostics": {"relatedInformation": True, "versionSupport": True,
                                       "codeDescriptionSupport": True, "dataSupport": True},
                "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "inlayHint": {"dynamicRegistration": False},
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}},
            },
            "workspace": {"configuration": True, "workspaceFolders": True},
            "window": {"workDoneProgress": False},
            "general": {"positionEncodings": ["utf-16"]},
        }
        init, dt_init = c.request("initialize", {
            "processId": os.getpid(), "clientInfo": {"name": "gradsight-bench"},
            "rootUri": c.root_uri, "workspaceFolders": [{"uri": c.root_uri, "name": "corpus"}],
            "capabilities": caps}, timeout=self.timeout)
        scaps = (init or {}).get("capabilities", {})
        self.server_name = ((init or {}).get("serverInfo") or {}).get("name", "?")
        self.pull = bool(scaps.get("diagnosticProvider"))
        sync = scaps.get("textDocumentSync", 1)
        self.incremental = (sync.get("change") if isinstance(sync, dict) else sync) == 2
        self.hover = bool(scaps.get("hoverProvider"))
        self.inlay = bool(scaps.get("inlayHintProvider"))
        self.rows["initialize"] = dt_init
        c.notify("initialized", {})

        uris = [f.as_uri() for f in files]
        texts = [f.read_text(encoding="utf-8") for f in files]

        # start -> first diagnostics, and the cold didOpen of each big file
        opens: dict[str, list[float]] = {u: [] for u in uris}
        for i, (uri, text) in enumerate(zip(uris, texts)):
            mark = c.diag_mark()
            sent = self.open_doc(c, uri, text)
            dt = self.diagnostics_after(c, uri, mark, sent)
            if i == 0:
                self.rows["start_to_first_diags"] = (sent + dt) - c.t_start
            self.rows[f"open_cold:{files[i].name}"] = dt
            self.progress(f"first didOpen -> diagnostics, {files[i].name}: {dt * 1000:.1f} ms")

        # re-open with a distinct trailing comment each time (median)
        reps = 3 if self.quick else 7
        for uri, text in zip(uris, texts):
            for k in range(reps):
                self.close_doc(c, uri)
                mark = c.diag_mark()
                sent = self.open_doc(c, uri, text + f"# bench reopen {k}\n", version=self.versions[uri] + 1)
                opens[uri].append(self.diagnostics_after(c, uri, mark, sent))
                self.progress(f"re-open {uri.rsplit('/', 1)[-1]}: {opens[uri][-1] * 1000:.1f} ms")
            self.close_doc(c, uri)
            mark = c.diag_mark()
            sent = self.open_doc(c, uri, text, version=self.versions[uri] + 1)
            self.diagnostics_after(c, uri, mark, sent)
        for f, uri in zip(files, uris):
            self.rows[f"open:{f.name}"] = median(opens[uri])

        # one-character didChange on vision_transformer.py
        vit_uri, vit_text = uris[0], texts[0]
        lines = vit_text.splitlines()
        start, _ = forward_range(vit_text)
        target = start + 2  # a line inside the first forward()
        col = len(lines[target])
        changes = []
        n_change = 8 if self.quick else 20
        for k in range(n_change):
            version = self.versions[vit_uri] + 1
            if k % 2 == 0:  # insert one space at the end of the line, then delete it again
                rng = {"start": {"line": target, "character": utf16_col(lines[target], col)},
                       "end": {"line": target, "character": utf16_col(lines[target], col)}}
                new_text = " "
                lines[target] = lines[target] + " "
            else:
                rng = {"start": {"line": target, "character": utf16_col(lines[target], col)},
                       "end": {"line": target, "character": utf16_col(lines[target], col) + 1}}
                new_text = ""
                lines[target] = lines[target][:col]
            full = "\n".join(lines) + "\n"
            change = {"range": rng, "text": new_text} if self.incremental else {"text": full}
            self.versions[vit_uri] = version
            mark = c.diag_mark()
            sent = c.notify("textDocument/didChange", {"textDocument": {"uri": vit_uri, "version": version},
                                                       "contentChanges": [change]})
            changes.append(self.diagnostics_after(c, vit_uri, mark, sent))
            self.progress(f"didChange #{k + 1}: {changes[-1] * 1000:.1f} ms")
            time.sleep(0.05)  # like typing: let the previous analysis settle
        self.rows["change"] = median(changes)
        self.rows["change_max"] = max(changes)

        # hover at tensor names
        if self.hover:
            positions = tensor_positions(vit_text, 20 if self.quick else 50)
            hovers = []
            answered = 0
            for line, ch in positions:
                res, dt = c.request("textDocument/hover", {"textDocument": {"uri": vit_uri},
                                                           "position": {"line": line, "character": ch}})
                hovers.append(dt)
                answered += res is not None
            self.progress(f"{len(hovers)} hovers done")
            self.rows["hover"] = median(hovers)
            self.rows["hover_p90"] = sorted(hovers)[int(0.9 * (len(hovers) - 1))] if hovers else None
            self.rows["hover_answered"] = f"{answered}/{len(hovers)}"
        else:
            self.notes.append("server does not advertise hoverProvider; hover skipped")

        # inlay hints for a 60-line range
        if self.inlay:
            s, e = forward_range(vit_text)
            hints = []
            count = 0
            for _ in range(8 if self.quick else 20):
                res, dt = c.request("textDocument/inlayHint", {"textDocument": {"uri": vit_uri}, "range": {
                    "start": {"line": s, "character": 0}, "end": {"line": e, "character": 0}}})
                hints.append(dt)
                count = len(res or [])
            self.progress(f"{len(hints)} inlay-hint requests done")
            self.rows["inlay"] = median(hints)
            self.rows["inlay_count"] = count
        else:
            self.notes.append("server does not advertise inlayHintProvider; inlay hints skipped")

        self.rows["rss_three_files"] = rss_mib(c.proc.pid)[0]

        # the whole corpus as open documents
        if not self.quick:
            all_files = corpus.corpus_files()
            already = set(uris)
            t0 = time.perf_counter()
            pending = []
            for f in all_files:
                uri = f.as_uri()
                if uri in already:
                    continue
                mark = c.diag_mark()
                sent = self.open_doc(c, uri, f.read_text(encoding="utf-8", errors="replace"))
                pending.append((uri, mark, sent))
            missing = 0
            deadline = time.perf_counter() + max(self.timeout, 600.0)
            for uri, mark, sent in pending:
                if c.closed:
                    raise LspError("server exited while the corpus was open")
                try:
                    if self.pull:
                        self.diagnostics_after(c, uri, mark, sent)
                    else:
                        c.wait_diagnostics(uri, mark, self.versions.get(uri),
                                           max(0.01, min(self.timeout, deadline - time.perf_counter())))
                except LspError:
                    missing += 1
            if missing:
                self.notes.append(f"{missing} corpus documents got no diagnostics within {self.timeout:.0f} s")
            self.rows["corpus_open_s"] = time.perf_counter() - t0
            self.progress(f"whole corpus open and analysed in {self.rows['corpus_open_s']:.1f} s")
            self.rows["corpus_docs"] = len(all_files)
            time.sleep(1.0)
            self.rows["rss_corpus"], self.rows["hwm_corpus"] = rss_mib(c.proc.pid)
        if c.server_requests:
            self.notes.append("server asked the client: " + ", ".join(sorted(set(c.server_requests))))
        self.print_report()
        return 0

    def print_report(self) -> None:
        r = self.rows
        ms = lambda v: "-" if v is None else f"{v * 1000:.1f} ms"  # noqa: E731
        mode = "pull (textDocument/diagnostic)" if getattr(self, "pull", False) else "push (publishDiagnostics)"
        print(f"server: {' '.join(self.argv)} ({getattr(self, 'server_name', '?')}); diagnostics: {mode}; "
              f"sync: {'incremental' if getattr(self, 'incremental', False) else 'full'}")
        print()
        print(f"{'measurement':<62} {'value':>12}")
        print("-" * 75)
        for key, val in r.items():
            if key.startswith("open_cold:"):
                print(f"{'didOpen -> diagnostics, first open, ' + key.split(':', 1)[1]:<62} {ms(val):>12}")
            elif key.startswith("open:"):
                print(f"{'didOpen -> diagnostics, re-open median, ' + key.split(':', 1)[1]:<62} {ms(val):>12}")
        simple = [("initialize", "initialize request", ms), ("start_to_first_diags", "server start -> first diagnostics", ms),
                  ("change", "didChange (1 char) -> diagnostics, median", ms),
                  ("change_max", "didChange (1 char) -> diagnostics, max", ms),
                  ("hover", "hover at tensor names, median", ms), ("hover_p90", "hover at tensor names, p90", ms),
                  ("hover_answered", "hovers answered with content", str),
                  ("inlay", "inlay hints, 60-line range, median", ms), ("inlay_count", "inlay hints returned", str),
                  ("rss_three_files", "server RSS with the big files open", lambda v: f"{v:.0f} MiB"),
                  ("corpus_open_s", "open whole corpus -> all diagnostics",
                   lambda v: f"{v:.1f} s"), ("corpus_docs", "documents open", str),
                  ("rss_corpus", "server RSS, whole corpus open", lambda v: f"{v:.0f} MiB"),
                  ("hwm_corpus", "server peak RSS (VmHWM)", lambda v: f"{v:.0f} MiB")]
        for key, label, fmt in simple:
            if key in r and r[key] is not None:
                print(f"{label:<62} {fmt(r[key]):>12}")
        print()
        nlines = {f.rsplit('/', 1)[-1]: corpus.count_lines(corpus.CORPUS / f) for f in self.big_files}
        largest = max(nlines, key=nlines.get)  # functional.py (7,284 lines) for the default files
        first = self.big_files[0].rsplit("/", 1)[-1]
        targets = [
            ("server start -> first diagnostics", r.get("start_to_first_diags"), 1.0, "< 1 s"),
            (f"didOpen -> diagnostics (re-open median), {largest} ({nlines[largest]:,} lines)",
             r.get(f"open:{largest}"), 0.100, "< 100 ms"),
            (f"didChange -> diagnostics (median), {first} ({nlines[first]:,} lines)",
             r.get("change"), 0.050, "< 50 ms"),
            ("hover, median", r.get("hover"), 0.010, "< 10 ms"),
            ("server RSS, whole corpus open", r.get("rss_corpus"), 200.0, "< 200 MiB"),
        ]
        print(f"{'target':<72} {'measured':>12} {'target':>10}  met?")
        print("-" * 102)
        for label, val, limit, shown in targets:
            if val is None:
                print(f"{label:<72} {'-':>12} {shown:>10}  not measured")
                continue
            txt = f"{val:.0f} MiB" if "RSS" in label else ms(val)
            print(f"{label:<72} {txt:>12} {shown:>10}  {'yes' if val < limit else 'NO'}")
        for n in self.notes:
            print(f"note: {n}")


STARTUP_TRAIN = """\
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
pred = net(torch.randn(6, 3))
print(pred.numpy())
total = 0
for step in range(3):
    loss = net(torch.randn(6, 3)).sum()
    loss.backward()
    total += loss
"""


def startup(argv: list[str], runs: int, pull: bool) -> int:
    """Cold starts, the way an editor opens a small script: spawn -> `initialize` answered, and spawn ->
    the first diagnostics of the file opened right after `initialized` (median and max of `runs`)."""
    init_times, init_rtt, first, after_open = [], [], [], []
    caps: dict = {"textDocument": {"publishDiagnostics": {"versionSupport": True},
                                   "hover": {"contentFormat": ["markdown", "plaintext"]}},
                  "workspace": {"configuration": False}, "window": {"workDoneProgress": False}}
    if pull:
        caps["textDocument"]["diagnostic"] = {"dynamicRegistration": False}
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        script = root / "train.py"
        script.write_text(STARTUP_TRAIN, encoding="utf-8")
        for _ in range(runs):
            c = Client(argv, root, root / "server.stderr")
            c.root_uri = root.as_uri()
            try:
                _, rtt = c.request("initialize", {"processId": os.getpid(), "rootUri": c.root_uri,
                                                  "capabilities": caps}, timeout=60)
                init_times.append(c.last_arrival - c.t_start)
                init_rtt.append(rtt)
                c.notify("initialized", {})
                mark = c.diag_mark()
                sent = c.notify("textDocument/didOpen", {"textDocument": {
                    "uri": script.as_uri(), "languageId": "python", "version": 1, "text": STARTUP_TRAIN}})
                if pull:
                    _, dt = c.request("textDocument/diagnostic", {"textDocument": {"uri": script.as_uri()}})
                    arrival = sent + dt
                else:
                    arrival = c.wait_diagnostics(script.as_uri(), mark, 1)
                first.append(arrival - c.t_start)
                after_open.append(arrival - sent)
            finally:
                c.shutdown()
    ms = lambda v: f"{v * 1000:.0f} ms"  # noqa: E731
    print(f"server: {' '.join(argv)}; {runs} cold starts; diagnostics {'pulled' if pull else 'pushed'}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'measurement':<58} {'median':>9} {'max':>9} {'target':>9}")
    for label, values, target in (
            ("spawn -> initialize answered", init_times, "< 500 ms"),
            ("initialize request -> answer", init_rtt, ""),
            ("spawn -> first diagnostics of the opened file", first, "< 1 s"),
            ("didOpen -> first diagnostics (same runs)", after_open, "")):
        print(f"{label:<58} {ms(statistics.median(values)):>9} {ms(max(values)):>9} {target:>9}")
    return 0


def typing_during_walk(argv: list[str], folder: pathlib.Path, edits: int) -> int:
    """`diagnosticMode = "workspace"`: didChange -> diagnostics on an open file while the server walks
    `folder` (checking the files that are not open), against the same edits in `openFiles` mode. The
    walk's cache is disabled by a fresh copy of the folder, so every file is really analysed."""
    results: dict[str, list[float]] = {}
    published: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        import shutil

        root = pathlib.Path(tmp) / folder.name
        shutil.copytree(folder, root, ignore=shutil.ignore_patterns(".gradsight_cache"))
        script = root / "gradsight_bench_typing.py"
        script.write_text(STARTUP_TRAIN, encoding="utf-8")
        uri = script.as_uri()
        for mode in ("openFiles", "workspace"):
            c = Client(argv, root, pathlib.Path(tmp) / f"{mode}.stderr")
            c.root_uri = root.as_uri()
            try:
                c.request("initialize", {"processId": os.getpid(), "rootUri": c.root_uri,
                                         "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
                                         "initializationOptions": {"settings": {"diagnosticMode": mode}}}, timeout=60)
                c.notify("initialized", {})
                mark = c.diag_mark()
                c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                   "text": STARTUP_TRAIN}})
                c.wait_diagnostics(uri, mark, 1)
                times = []
                for version in range(2, edits + 2):
                    time.sleep(0.2)
                    mark = c.diag_mark()
                    sent = c.notify("textDocument/didChange", {
                        "textDocument": {"uri": uri, "version": version},
                        "contentChanges": [{"text": STARTUP_TRAIN + f"# edit {version}\n"}]})
                    times.append(c.wait_diagnostics(uri, mark, version) - sent)
                results[mode] = times
                with c._cond:
                    published[mode] = len({u for _, u, _, n in c.diagnostics if u != uri})
            finally:
                c.shutdown()
    print(f"{edits} edits of a small open file while the server has {folder} ({sum(1 for _ in folder.rglob('*.py'))} "
          f"Python files) as its workspace; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"{'diagnosticMode':<16} {'didChange -> diagnostics, median':>34} {'max':>9} {'other files published':>23}")
    for mode, times in results.items():
        print(f"{mode:<16} {statistics.median(times) * 1000:>31.0f} ms {max(times) * 1000:>6.0f} ms "
              f"{published[mode]:>23}")
    print("(the debounce of 150 ms is part of every didChange time; only files with problems are published)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions; skip opening the whole corpus")
    ap.add_argument("--server", help="the server command line (default: <venv python> -m gradsight lsp)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any one answer (default 60)")
    ap.add_argument("--files", help="comma-separated corpus paths (relative to bench/.corpus) to use instead of "
                    "the three big files; the first one gets the didChange, hover and inlay-hint measurements")
    ap.add_argument("-q", "--no-progress", action="store_true", help="do not print progress to stderr")
    ap.add_argument("--startup", type=int, metavar="N", default=0,
                    help="only measure N cold starts on a small script (spawn -> initialize, -> first diagnostics)")
    ap.add_argument("--pull", action="store_true", help="with --startup: pull diagnostics instead of waiting for them")
    ap.add_argument("--typing-during-walk", metavar="DIR", nargs="?", const="timm/timm",
                    help="only measure typing latency while diagnosticMode=workspace walks DIR (a corpus folder, "
                         "default timm/timm), against openFiles")
    args = ap.parse_args(argv)
    if args.typing_during_walk:
        corpus.ensure_corpus(quiet=True)
        py = corpus.project_python() or pathlib.Path(sys.executable)
        server = shlex.split(args.server) if args.server else [str(py), "-m", "gradsight", "lsp"]
        return typing_during_walk(server, corpus.CORPUS / args.typing_during_walk, 15)
    if args.startup:
        py = corpus.project_python() or pathlib.Path(sys.executable)
        server = shlex.split(args.server) if args.server else [str(py), "-m", "gradsight", "lsp"]
        return startup(server, args.startup, args.pull)
    big = tuple(f.strip() for f in args.files.split(",")) if args.files else BIG_FILES
    corpus.ensure_corpus(quiet=True)
    if args.server:
        server = shlex.split(args.server)
    else:
        py = corpus.project_python() or pathlib.Path(sys.executable)
        server = [str(py), "-m", "gradsight", "lsp"]
    return Bench(server, args.quick, args.timeout, big, verbose=not args.no_progress).run()


if __name__ == "__main__":
    sys.exit(main())
