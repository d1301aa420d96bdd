#!/usr/bin/env python3
"""Child side of `gradsight trace`: run one script under autograd instrumentation.

Usage (the parent builds this command line; people rarely do)::

    python runner.py --result OUT.json [--function NAME] [--device auto|cpu|cuda]
                     [--max-steps N] [--memory-mb M] -- SCRIPT

It runs in the *user's* interpreter, so it imports only the standard library and torch, never
gradsight, and it works when this file is copied alone anywhere. The script owns stdout and stderr;
the result goes, as one JSON object, to the file named by ``--result``.

How it watches autograd (see docs/trace.md for the measured costs):

* a ``TorchFunctionMode`` sees every torch call made from Python. For each one it finds the user's
  file:line (walking frames outward past torch and library files, cached per code object), tags the
  output's ``grad_fn`` with that site, remembers where gradient history was cut (``detach``, ``.data``,
  ``item``, ``tolist``, ``numpy``, ``float()``, ``torch.tensor(t)``, ops under ``no_grad``) and logs
  in-place writes per storage;
* ``saved_tensors_hooks`` record which op saved each tensor and its version. Installing hooks turns
  PyTorch's own version check off, so ``unpack`` re-does it and raises the usual error itself, naming
  the line that mutated the tensor and the line that saved it;
* ``torch.autograd.backward``/``grad`` are wrapped to explain failures by their root cause (the line that
  cut the history, the line that carried a freed graph into a new one) and to notice leaves that a
  cut left without a gradient; a global optimizer-step hook counts steps for ``--max-steps``.

No tensor data is kept: side tables are keyed by ``id()`` and cleaned by weak references, and the
few strong references to graph nodes are dropped at the next backward.
"""

from __future__ import annotations

import argparse
import builtins
import collections
import contextlib
import importlib.util
import json
import linecache
import os
import re
import runpy
import signal
import sys
import sysconfig
import traceback
import warnings
import weakref

PROTOCOL = 1
SCRIPT_MARK = b"\n\x00gradsight-trace: end of script\x00\n"  # the same bytes as gradsight.trace.SCRIPT_MARK
MAX_EVENTS = 2000
MAX_FINDINGS = 200
MAX_TEXT = 2000
TRACE_ERROR = "GradsightTraceError"
INPUT_MESSAGE = "gradsight trace: the script asked for input(); traces run without stdin"

NAMES = {
    "GS900": "runtime-error",
    "GS901": "inplace-on-saved-tensor-confirmed",
    "GS902": "backward-through-freed-graph-confirmed",
    "GS903": "backward-without-grad-confirmed",
    "GS904": "parameter-without-gradient",
    "GS905": "graph-kept-alive",
    "GS906": "leaf-inplace-confirmed",
    "GS907": "numpy-on-grad-tensor-confirmed",
    "GS908": "step-without-gradients",
    "GS909": "gradients-accumulated-across-steps",
    "GS910": "exhausted-parameters-generator",
    "GS911": "unregistered-submodule",
    "GS912": "graphs-kept-in-container",
    "GS913": "loss-term-without-gradient",
}

# Op classification flags (computed once per torch callable).
INPLACE = 1
CUT = 2  # returns a tensor without history (detach, .data, torch.tensor(t))
EXIT = 4  # leaves tensor land (item, tolist, numpy, float(), ...)
CTOR = 8  # builds a tensor from Python data (torch.tensor, as_tensor, from_numpy)
DEVICE = 16  # moves tensors between devices
PASS = 32  # getters and bookkeeping: no analysis
FOREACH = 64  # torch._foreach_*_: mutates a list of tensors

_INPLACE_DUNDERS = {
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
    "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__imatmul__",
}
_NOT_MUTATING = {"requires_grad_", "share_memory_", "detach_", "retain_grad", "record_stream_",
                 "_coalesced_", "is_set_to", "__get__"}
_CUT_NAMES = {"detach", "data", "new_tensor"}
_ADD_NAMES = {"__add__", "__radd__", "__sub__", "__rsub__", "add", "sub"}
_EXIT_NAMES = {"item", "tolist", "numpy", "__float__", "__int__", "__index__", "__complex__", "__array__"}
_CTOR_NAMES = {"tensor", "as_tensor", "from_numpy", "asarray", "new_tensor", "frombuffer"}
_DEVICE_NAMES = {"to", "cuda", "pin_memory"}
_GETTER_OPS = {"data", "T", "mT", "H", "mH", "real", "imag"}
_PASS_NAMES = {"__repr__", "__format__", "__str__", "size", "dim", "numel", "__len__", "backward",
               "register_hook", "retain_grad", "__hash__", "stride",
               "is_contiguous", "data_ptr", "element_size", "untyped_storage", "storage", "type",
               "__reduce_ex__", "__deepcopy__", "__getstate__", "__setstate__", "__array_wrap__",
               "__contains__", "__iter__", "__bool__", "__dir__", "is_floating_point", "is_complex",
               "get_device", "nelement", "requires_grad_", "__set__", "_set_grad_enabled",
               "_record_function_enter_new", "_record_function_exit._RecordFunction", "is_grad_enabled"}

# Tag kinds, in the order one wins over another when an op mixes inputs.
K_CREATED, K_NOGRAD, K_CUT, K_REWRAP = 1, 2, 3, 3


class _Stop(BaseException):
    """Raised into the script to end the trace (max steps, timeout, cancel). Not an Exception, so
    `except Exception` in the script does not swallow it."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def _gfn(t):
    """`t.grad_fn`, or None where reading it raises: PyTorch forbids it on a view made under no_grad whose
    base was then written in place (what `nn.init.orthogonal_` does), and the script never reads it."""
    try:
        return t.grad_fn
    except RuntimeError:
        return None


def _short(text, limit=60):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _source(path, line):
    if not path or not line:
        return ""
    return linecache.getline(path, line).strip()


def _columns(path, line):
    text = linecache.getline(path, line) if path and line else ""
    text = text.rstrip("\r\n")
    stripped = text.lstrip()
    if not stripped:
        return 1, 1
    # Columns are 1-based code points; the range covers the line without its indentation.
    return len(text) - len(stripped) + 1, len(text.rstrip()) + 1


def _carried_name(path, line):
    """The loop-carried variable on a line like `out, hidden = rnn(x, hidden)`: assigned and also read."""
    import ast

    src = _source(path, line)
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    def names(t):
        # Plain names and attribute chains (`self.center`): state carried on a module is carried too.
        out = []
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                out.append(n.id)
            elif isinstance(n, ast.Attribute):
                try:
                    out.append(ast.unparse(n))
                except Exception:
                    pass
        return out

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            stored = [n for t in targets for n in ([ast.unparse(t)] if isinstance(t, ast.Attribute) else names(t))
                      if n]
            value = node.value
            if value is None:
                continue
            read = set(names(value))
            if isinstance(node, ast.AugAssign):
                read.update(stored)
            for name in stored:
                if name in read:
                    return name
    return None


_CONTEXTS = {}  # filename -> [(first line, last line, context line, kind)] of no-grad regions


def _no_grad_regions(path):
    """`with torch.no_grad():` / `inference_mode()` / `set_grad_enabled(False)` blocks and functions decorated
    with them, in one file (parsed once)."""
    got = _CONTEXTS.get(path)
    if got is not None:
        return got
    import ast

    regions = []
    try:
        tree = ast.parse("".join(linecache.getlines(path)))
    except (SyntaxError, ValueError):
        tree = None

    def disables(call):
        f = call.func if isinstance(call, ast.Call) else call
        name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
        if name in ("no_grad", "inference_mode"):
            return True
        if name == "set_grad_enabled" and isinstance(call, ast.Call) and call.args:
            a = call.args[0]
            return isinstance(a, ast.Constant) and a.value is False
        return False

    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(disables(i.context_expr) for i in node.items):
            regions.append((node.body[0].lineno, node.end_lineno, node.lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                if disables(d):
                    regions.append((node.body[0].lineno, node.end_lineno, d.lineno))
    _CONTEXTS[path] = regions
    return regions


def _grad_context(chain):
    """The innermost no-grad context enclosing a frame of `chain` [(path, line), innermost first]:
    (context path, context line, the enclosed path, the enclosed line), or None."""
    for path, line in chain:
        best = None
        for first, last, ctx in _no_grad_regions(path):
            if first <= line <= last and (best is None or first > best[0]):
                best = (first, ctx)
        if best is not None:
            return path, best[1], path, line
    return None


def _carried_is_argument(code, name):
    """Is the carried `name` a plain argument of the function `code` (so the caller carries the state)?"""
    if code is None or not name or "." in name:
        return False
    n = code.co_argcount + code.co_kwonlyargcount
    return name in code.co_varnames[:n]


def _code(path, line):
    src = _source(path, line)
    if "#" in src:
        src = src.split("#", 1)[0].rstrip() or src
    return "`%s`" % _short(src, 70) if src else "line %d" % line


class Tracer:
    def __init__(self, torch, script, device, max_steps, map_cuda):
        self.torch = torch
        self.Tensor = torch.Tensor
        self._real_device = torch.device
        self.script = script
        self.device = device
        self.max_steps = max_steps
        self.map_cuda = map_cuda
        self.main_pid = os.getpid()

        self.findings = []
        self._finding_keys = set()
        self.events = {}
        self.internal_errors = []
        self.error = None
        self.traceback = None  # the script's traceback as Python would print it, without the runner's frames
        self.stopped = None
        self.stopping = None  # reason, once a stop was decided
        self.stop_pending = False
        self.busy = 0  # >0 while our own hooks run torch code: the mode passes such calls through
        self.probing = False

        self.opt_steps = 0
        self.n_backward = 0  # completed backward calls; also the "generation" of graph nodes
        self.backwards = []  # (path, line, retain) per backward call, by generation
        self.backward_code = []  # the code object (function) that made each backward call
        self.create_graph_calls = set()  # indices into `backwards` of calls with create_graph=True
        self._grad_inputs = []
        self.module_sites = weakref.WeakKeyDictionary()  # nn.Module -> (path, line) where it was built
        self._opt_params = {}  # id(optimizer) -> (group sizes, weakref(optimizer), its parameters)
        self.ever_grad = set()  # id() of parameters seen with a gradient at some optimizer step
        self.opt_watch = {}  # id(optimizer) -> its step line, step count and parameter names
        self.rg_sites = {}  # id(tensor) -> (path, line) of its requires_grad_() call
        self.manual_state = {}  # id(leaf) -> (weakref(grad), backward count, path, line): manual updates (GS909)
        self.step_log = []  # (backward count, weakref(optimizer)) per optimizer step
        self.step_state = {}  # id(optimizer) -> its last step: backward count, sampled grads, line (GS909)
        self.watched_grads = set()  # id() of sampled .grad tensors: an in-place write to one resets it
        self.grad_resets = set()
        self.last_zero_grad = None
        self.seq = 0  # orders packs and in-place writes

        self.cur = (None, 0, "")  # site of the op now running: read by the pack hook
        self.step_line = -1  # user line and frame id of the optimizer.step() call in progress
        self.step_frame = None
        self.step_label = "optimizer.step()"
        self.tags = {}  # id(tensor) -> tag; tag = (kind, path, line, op, eid, is_data)
        self._tag_refs = {}
        self.cut_events = collections.OrderedDict()  # eid -> dict (bounded)
        self._next_eid = 0
        self.recent_exits = collections.deque(maxlen=16)  # (eid, frame id, id(result))
        self.attached = set()  # eids attached to graphs since the last backward walk
        self.mutlog = {}  # storage id -> [(path, line, op, seq, via_data)]
        self.data_mutations = {}  # storage id -> (path, line, op, seq): writes through .data
        self.leaf_sites = {}  # id(leaf) -> (path, line, op)
        self.candidates = {}  # id(leaf) -> dict: leaves a cut kept from a gradient (GS904)
        self.received = {}  # id(leaf) -> weakref, leaves seen with a gradient (no WeakSet: tensors' == is elementwise)
        self.gs905 = {}  # (path, line) -> info
        # GS912: per user line that makes tensors with a graph, how many it made and weak references to the
        # latest ones; candidates (a container that holds several of them), resolved at the end unless a
        # backward later went through them (the accumulate-then-backward pattern).
        # (path, line) -> [outputs made, deque of weakrefs (one per execution), inspected, executions,
        #                  the most alive at a look]
        self.kept_sites = {}
        self.kept_cands = []  # dicts: store, site, how, count, backwarded
        self.kept_looks = 0
        self._kept_last = None  # the (path, line) that made the last tensor with a graph (note_kept)
        # GS913: Python numbers taken with .item()/float() out of tensors that require grad, (number, path, line),
        # and the loss terms built from one by addition: their grad_fn metadata holds "gs_term".
        self.item_numbers = collections.deque(maxlen=32)
        self.item_terms = 0
        self._parsed = {}  # path -> ast.Module or None (store statements are looked up by their text)
        self.explained = []  # exceptions a finding already explains
        self.pending_explain = None
        self._holding = []  # cut events holding graph nodes until the next backward

        self._user_code = {}
        self._finfo = {}
        self._node_saved_attrs = {}
        tdir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
        skip = {tdir, os.path.abspath(__file__)}
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            try:
                p = sysconfig.get_paths().get(key)
            except Exception:
                p = None
            if p:
                skip.add(os.path.abspath(p) + os.sep)
        try:
            import site

            for p in list(site.getsitepackages()) + [site.getusersitepackages()]:
                skip.add(os.path.abspath(p) + os.sep)
        except Exception:
            pass
        self._skip = tuple(sorted(skip))

    # ----------------------------------------------------------------------------------- sites
    def _is_user(self, filename):
        if filename == self.script:
            return True
        if not filename or filename.startswith("<"):
            return False
        absname = os.path.abspath(filename)
        if absname == self.script:
            return True
        return not absname.startswith(self._skip) and absname != os.path.abspath(__file__)

    def site(self, depth=2):
        """The innermost user frame calling into torch (None if the call came from libraries only)."""
        f = sys._getframe(depth)
        cache = self._user_code
        while f is not None:
            co = f.f_code
            u = cache.get(co)
            if u is None:
                u = cache[co] = self._is_user(co.co_filename)
            if u:
                return f
            f = f.f_back
        return None

    def user_chain(self, frame, limit=24):
        """(code, line) of the user frames from `frame` outward."""
        out = []
        f = frame
        cache = self._user_code
        while f is not None and len(out) < limit:
            co = f.f_code
            u = cache.get(co)
            if u is None:
                u = cache[co] = self._is_user(co.co_filename)
            if u:
                out.append((co, f.f_lineno))
            f = f.f_back
        return tuple(out)

    def outer_user_lines(self, frame, limit=3):
        out = []
        f = frame.f_back if frame is not None else None
        while f is not None and len(out) < limit:
            co = f.f_code
            u = self._user_code.get(co)
            if u is None:
                u = self._user_code[co] = self._is_user(co.co_filename)
            if u:
                out.append((co.co_filename, f.f_lineno))
            f = f.f_back
        return out

    # ---------------------------------------------------------------------------------- output
    def finding(self, code, path, line, severity, message, related=(), fix=None):
        if not path or not line:
            return
        key = (code, path, line)
        if key in self._finding_keys or len(self.findings) >= MAX_FINDINGS:
            return
        self._finding_keys.add(key)
        col, end_col = _columns(path, line)
        rel = []
        seen = {(path, line)}
        for rpath, rline, rmsg in related:
            if not rpath or not rline or (rpath, rline) in seen:
                continue
            seen.add((rpath, rline))
            rel.append({"path": rpath, "line": rline, "column": _columns(rpath, rline)[0],
                        "message": _short(rmsg, MAX_TEXT)})
        self.findings.append({
            "path": path, "line": line, "column": col, "end_line": line, "end_column": end_col,
            "code": code, "name": NAMES[code], "severity": severity,
            "message": _short(message, MAX_TEXT), "related": rel, "fix": fix, "source": "trace",
        })

    def event(self, path, line, kind, op, t=None, extra=None):
        if path != self.script:
            return
        key = (line, kind, op)
        rec = self.events.get(key)
        if rec is not None:
            rec["count"] += 1
            return
        if len(self.events) >= MAX_EVENTS:
            return
        rec = {"line": line, "kind": kind, "op": op, "shape": None, "dtype": None, "device": None,
               "requires_grad": None, "is_leaf": None, "grad_fn": None, "version": None, "count": 1}
        if t is not None:
            try:
                rec["shape"] = list(t.shape)
                rec["dtype"] = str(t.dtype).replace("torch.", "")
                rec["device"] = str(t.device)
                rec["requires_grad"] = bool(t.requires_grad)
                rec["is_leaf"] = bool(t.is_leaf)
                gf = t.grad_fn
                rec["grad_fn"] = gf.name() if gf is not None else None
                rec["version"] = int(t._version)
            except Exception:
                pass
        if extra:
            rec.update(extra)
        self.events[key] = rec

    def explain(self, exc):
        """Mark an exception as explained by a finding (no GS900 for it). Keeps the last few only: an
        exception holds its traceback's frames, and with them the script's tensors."""
        self.explained.append(exc)
        if len(self.explained) > 20:
            del self.explained[0]

    def internal(self, exc):
        if len(self.internal_errors) < 20:
            # The innermost runner frame says which hook failed: enough to reproduce, short enough to log.
            where = ""
            for fs in traceback.extract_tb(exc.__traceback__):
                if fs.filename == os.path.abspath(__file__) or fs.filename == __file__:
                    where = " (runner line %d, in %s)" % (fs.lineno, fs.name)
            self.internal_errors.append("".join(traceback.format_exception_only(type(exc), exc)).strip()[:500] + where)

    # ------------------------------------------------------------------------------------ tags
    def set_tag(self, t, tag):
        i = id(t)
        if i not in self._tag_refs:
            try:
                self._tag_refs[i] = weakref.ref(t, self._drop_factory(i))
            except TypeError:
                return
        self.tags[i] = tag

    def _drop_factory(self, i):
        tags, refs = self.tags, self._tag_refs

        def drop(_ref):
            tags.pop(i, None)
            refs.pop(i, None)

        return drop

    def new_cut_event(self, kind, path, line, op, frame, src):
        """Remember a place where history was cut; src is the tensor that had the history."""
        self._next_eid += 1
        eid = self._next_eid
        ev = {"kind": kind, "path": path, "line": line, "op": op, "gen": self.n_backward,
              "src_gfs": [], "src_leaves": [], "src_site": None,
              # Inside a function (a model's forward), the caller's lines: findings name the call site too.
              "outer": (self.outer_user_lines(frame, 2)
                        if frame is not None and frame.f_code.co_name != "<module>" else ())}
        if src is not None:
            self._remember_source(ev, src)
        self.cut_events[eid] = ev
        if len(self.cut_events) > 4096:
            self.cut_events.popitem(last=False)
        return eid

    def _remember_source(self, ev, src):
        try:
            gf = _gfn(src)
        except Exception:
            return
        if gf is not None:
            # Strong references, dropped at the next backward: nodes cannot be weakly referenced.
            if len(ev["src_gfs"]) < 8 and not any(g is gf for g in ev["src_gfs"]):
                if not ev["src_gfs"]:
                    self._holding.append(ev)
                ev["src_gfs"].append(gf)
            site = gf.metadata.get("gs")
            if site and ev["src_site"] is None:
                ev["src_site"] = site
        elif src.requires_grad and len(ev["src_leaves"]) < 64:
            ev["src_leaves"].append(weakref.ref(src))

    # ------------------------------------------------------------------------------ the mode op
    def classify(self, func):
        name = getattr(func, "__name__", "") or ""
        getter = False
        if name == "__get__":
            getter = True
            name = getattr(getattr(func, "__self__", None), "__name__", name) or name
        flags = 0
        if getter and name not in _GETTER_OPS:
            flags |= PASS
        elif name in _PASS_NAMES:
            flags |= PASS
        else:
            if name in _INPLACE_DUNDERS or (
                    name.endswith("_") and not name.endswith("__") and name not in _NOT_MUTATING):
                flags |= INPLACE
                if name.startswith("_foreach_"):
                    flags |= FOREACH
            if name in _CUT_NAMES:
                flags |= CUT
            if name in _EXIT_NAMES:
                flags |= EXIT
            if name in _CTOR_NAMES:
                flags |= CTOR
            if name in _DEVICE_NAMES:
                flags |= DEVICE
        info = (name, flags)
        try:
            self._finfo[func] = info
        except TypeError:
            pass
        return info

    def on_op(self, func, args, kwargs):
        # The hot path: runs for every torch call the script makes. Keep it flat and allocation-light.
        if self.busy:
            return func(*args, **kwargs)
        if self.stopping is not None:
            raise _Stop(self.stopping)
        info = self._finfo.get(func)
        if info is None:
            info = self.classify(func)
        name, flags = info
        if flags & PASS:
            if name == "requires_grad_" and args and isinstance(args[0], self.Tensor):
                # Where a tensor started to require grad: ops that ran before do not depend on it (gap: "the
                # differentiated Tensor appears to not have been used in the graph").
                try:
                    uf = self.site(3)
                    if uf is not None and len(self.rg_sites) < 10000:
                        self.rg_sites[id(args[0])] = (uf.f_code.co_filename, uf.f_lineno)
                except Exception as exc:
                    self.internal(exc)
            return func(*args, **kwargs)
        f = sys._getframe(2)  # 0: on_op, 1: the mode's __torch_function__, 2: whoever called torch
        cache = self._user_code
        while f is not None:
            co = f.f_code
            u = cache.get(co)
            if u is None:
                u = cache[co] = self._is_user(co.co_filename)
            if u:
                break
            f = f.f_back
        if f is None:
            path, line = None, 0
        else:
            path, line = f.f_code.co_filename, f.f_lineno
            if line == self.step_line and id(f) == self.step_frame:
                # Inside optimizer.step(): only in-place writes matter (a step between a forward and
                # its backward changes saved parameters). Skip the rest: it is most of a small step's ops.
                if flags & INPLACE:
                    try:
                        self.log_step_write(name, flags, args, path, line)
                    except Exception as exc:
                        self.internal(exc)
                return func(*args, **kwargs)
        if kwargs or flags:
            if self.map_cuda and (flags & DEVICE or "device" in kwargs):
                if name == "cuda" or name == "pin_memory":
                    self.event(path, line, "op", name, args[0] if args else None, {"device": "cpu"})
                    return args[0]
                args, kwargs = self.map_device_args(name, args, kwargs)
            if flags & INPLACE or "out" in kwargs or kwargs.get("inplace") is True:
                try:
                    self.before_inplace(func, name if flags & INPLACE else (
                        name + ("(inplace=True)" if "out" not in kwargs else "(out=...)")), flags, args, kwargs, path, line, f)
                except Exception as exc:  # our bug must not break the script
                    self.internal(exc)
        self.cur = (path, line, name)
        try:
            out = func(*args, **kwargs)
        except Exception as exc:
            try:
                self.on_op_error(exc, name, args, path, line, f)
            except Exception as exc2:
                self.internal(exc2)
            raise
        try:
            if flags & EXIT:
                self.on_exit(out, name, args, path, line, f)
            elif isinstance(out, self.Tensor):
                if path == self.script and not flags & INPLACE:
                    key = (line, "cut" if flags & CUT and self._src_has_history(args) else "op", name)
                    rec = self.events.get(key)
                    if rec is None:
                        self.event(path, line, key[1], name, out)
                    else:
                        rec["count"] += 1
                if out.requires_grad:
                    self.after_grad_op((out,), name, flags, args, path, line, f)
                    if self.item_numbers and name in _ADD_NAMES and f is not None:
                        self.note_item_term(out, args, path, line, f)
                else:
                    self.after_nograd_op((out,), name, flags, args, kwargs, path, line, f)
            elif type(out) in (tuple, list) and out and isinstance(out[0], self.Tensor):
                self.after_op(out, name, flags, args, kwargs, path, line, f)
        except _Stop:
            raise
        except Exception as exc:
            self.internal(exc)
        return out

    def map_device_args(self, name, args, kwargs):
        def conv(d):
            if isinstance(d, str):
                return "cpu" if d.startswith("cuda") else d
            if isinstance(d, self._real_device):
                return self._real_device("cpu") if d.type == "cuda" else d
            return d

        if "device" in kwargs:
            kwargs = dict(kwargs)
            kwargs["device"] = conv(kwargs["device"])
        if name == "to" and len(args) > 1:
            a1 = args[1]
            if isinstance(a1, int) and not isinstance(a1, bool):
                args = (args[0], "cpu") + tuple(args[2:])
            else:
                args = (args[0], conv(a1)) + tuple(args[2:])
        return args, kwargs

    def iter_tensors(self, args):
        T = self.Tensor
        for a in args:
            if isinstance(a, T):
                yield a
            elif type(a) in (list, tuple):
                for b in a:
                    if isinstance(b, T):
                        yield b

    def _inplace_module_site(self):
        """The construction site of the innermost nn.Module with `inplace=True` whose method is running."""
        f = sys._getframe(2)
        n = 0
        while f is not None and n < 12:
            n += 1
            m = f.f_locals.get("self") if f.f_code.co_name == "forward" else None
            if m is not None and getattr(m, "inplace", False) is True:
                return self.module_sites.get(m)
            if self._user_code.get(f.f_code):
                return None
            f = f.f_back
        return None

    def log_step_write(self, name, flags, args, path, line):
        T = self.Tensor
        targets = args[0] if flags & FOREACH and args and isinstance(args[0], (list, tuple)) else args[:1]
        self.seq += 1
        for t in targets:
            if isinstance(t, T) and t.requires_grad:
                key = t.untyped_storage()._cdata
                log = self.mutlog.get(key)
                if log is None:
                    log = self.mutlog[key] = []
                log.append((path, line, self.step_label, self.seq, False, None, ()))
                if len(log) > 4:
                    del log[0]

    def before_inplace(self, func, name, flags, args, kwargs, path, line, frame=None):
        targets = []
        T = self.Tensor
        if "out" in kwargs:
            o = kwargs["out"]
            targets.extend(o if isinstance(o, (list, tuple)) else [o])
        elif flags & FOREACH:
            if args and isinstance(args[0], (list, tuple)):
                targets.extend(args[0])
        elif args:
            targets.append(args[0])
        self.seq += 1
        recorded = False
        gen = self.n_backward
        if gen and targets and isinstance(targets[0], T) and targets[0].requires_grad:
            gf = _gfn(targets[0])
            s = gf.metadata.get("gs") if gf is not None else None
            if s is not None and s[3] < gen and s[1] == line and s[0] == path and path:
                self.note_gs905(path, line, s, targets[0])
        t0 = targets[0] if targets else None
        if (isinstance(t0, T) and t0.requires_grad and t0.is_leaf and t0.grad is not None and path
                and not flags & FOREACH and not self.torch.is_grad_enabled()):
            self.check_manual_update(t0, path, line)
        if self.watched_grads and name in ("zero_", "fill_", "mul_", "copy_", "detach_", "_foreach_zero_",
                                           "_foreach_mul_"):
            for t in targets:
                if id(t) in self.watched_grads:
                    self.grad_resets.add(id(t))
        for t in targets:
            if not isinstance(t, T):
                continue
            try:
                key = t.untyped_storage()._cdata
            except Exception:
                continue
            tag = self.tags.get(id(t))
            via_data = bool(tag and tag[5])
            log = self.mutlog.get(key)
            if log is None:
                if len(self.mutlog) > 50000:
                    self.mutlog.clear()
                log = self.mutlog[key] = []
            # Inside a forward, the caller's lines (the training loop) go to `related`; frames are not kept.
            outer = (tuple(self.outer_user_lines(frame, 2))
                     if frame is not None and frame.f_code.co_name != "<module>" else ())
            # A module built with inplace=True (nn.ReLU(inplace=True), nn.Dropout(p, inplace=True)) writing inside
            # a library forward: the statement to change is where the module was built.
            mod_site = self._inplace_module_site() if self.module_sites else None
            log.append((path, line, name, self.seq, via_data, mod_site, outer))
            if len(log) > 4:
                del log[0]
            if via_data:
                self.data_mutations[key] = (path, line, name, self.seq)
            if not recorded and not (flags & FOREACH):
                self.event(path, line, "inplace", name, t)
                recorded = True

    def after_op(self, out, name, flags, args, kwargs, path, line, frame):
        """Ops returning several tensors (split, unbind, rnn, ...)."""
        T = self.Tensor
        outs = tuple(o for o in out if isinstance(o, T))
        first = outs[0]
        if not (flags & INPLACE):
            kind = "cut" if flags & CUT and self._src_has_history(args) else "op"
            self.event(path, line, kind, name, first)
        if first.requires_grad:
            self.after_grad_op(outs, name, flags, args, path, line, frame)
        else:
            self.after_nograd_op(outs, name, flags, args, kwargs, path, line, frame)

    def _src_has_history(self, args):
        for t in self.iter_tensors(args):
            if t.requires_grad or id(t) in self.tags:
                return True
        return False

    def after_grad_op(self, outs, name, flags, args, path, line, frame):
        tags = self.tags
        gen = self.n_backward
        cut_eids = None
        older = False  # does the op consume a graph built before the last backward?
        T = self.Tensor
        for a in args:
            # Tensors directly, or inside a list argument (torch.cat, stack).
            inputs = a if type(a) in (list, tuple) and a and isinstance(a[0], T) else (a,)
            for b in inputs:
                cut_eids, old = self._grad_input(b, tags, gen, path, line, cut_eids)
                older = older or old
        for o in outs:
            gf = _gfn(o)
            if gf is None:
                if flags & CTOR:
                    # torch.tensor(x.item(), requires_grad=True): a new leaf rebuilt from cut data.
                    tag = self.ctor_tag(args, path, line, name, frame)
                    if tag[4] is not None:
                        self.set_tag(o, tag)
                # A new leaf that requires grad (factory with requires_grad=True); not one passed through.
                if path and not flags & INPLACE and id(o) not in self.leaf_sites and not any(a is o for a in args):
                    self.leaf_sites[id(o)] = (path, line, name)
                    try:
                        weakref.finalize(o, self.leaf_sites.pop, id(o), None)
                    except TypeError:
                        pass
                continue
            md = gf.metadata
            if "gs" not in md:
                md["gs"] = (path, line, name, gen)
                if path and frame is not None and not flags & INPLACE:
                    self.note_kept(o, path, line)
                if older and frame is not None:
                    # Rare in correct code, and what GS902 needs: the user call chain, to name the line in
                    # the loop that carried the old graph (not only the line inside a model's forward).
                    md["gs_chain"] = self.user_chain(frame)
            if cut_eids:
                prev = md.get("gs_cuts")
                md["gs_cuts"] = tuple(cut_eids) + (prev or ())
                self.attached.update(cut_eids)

    def _grad_input(self, a, tags, gen, path, line, cut_eids):
        """after_grad_op's per-input work: is `a` from a graph built before the last backward, and did a
        graph cut produce it?"""
        older = False
        if not isinstance(a, self.Tensor):
            return cut_eids, older
        agf = _gfn(a)
        if agf is not None:
            md = agf.metadata
            s = md.get("gs")
            # The first use of this node in each generation (between two backward calls): GS902 needs the
            # use that brought it into the graph an earlier backward freed, and the use after that backward.
            used = md.get("gs_used")
            if used is None:
                md["gs_used"] = [(gen, path, line)]
            elif used[-1][0] != gen:
                used.append((gen, path, line))
                if len(used) > 6:
                    del used[1]
            if gen and s is not None and s[3] < gen:
                older = True
                if s[1] == line and s[0] == path and path:
                    self.note_gs905(path, line, s, a)
        tg = tags.get(id(a))
        if tg is not None and tg[0] >= K_NOGRAD and tg[4] is not None:
            if cut_eids is None:
                cut_eids = []
            cut_eids.append(tg[4])
        return cut_eids, older

    def after_nograd_op(self, outs, name, flags, args, kwargs, path, line, frame):
        torch = self.torch
        tags = self.tags
        best = None
        grad_inputs = []
        for a in self.iter_tensors(args):
            tg = tags.get(id(a)) if tags else None
            if tg is not None and (best is None or tg[0] > best[0]):
                best = tg
            if a.requires_grad:
                grad_inputs.append(a)
        if flags & (CUT | CTOR) and grad_inputs:
            # detach(), .data, torch.tensor(t), torch.tensor([a, b]): a cut of something that had history.
            eid = self.new_cut_event("cut", path, line, name, frame, grad_inputs[0])
            tag = (K_CUT, path, line, name, eid, name == "data")
        elif flags & CUT and best is not None:
            tag = best[:5] + (best[5] or name == "data",)
        elif grad_inputs and not torch.is_grad_enabled():
            if best is not None and best[0] == K_NOGRAD and best[4] in self.cut_events:
                ev = self.cut_events[best[4]]
                for g in grad_inputs[:4]:
                    self._remember_source(ev, g)
                tag = best
            else:
                eid = self.new_cut_event("nograd", path, line, name, frame, grad_inputs[0])
                if frame is not None:
                    # The user frames now: GS903/GS904 name the `with torch.no_grad():` that encloses one.
                    self.cut_events[eid]["chain"] = [(co.co_filename, ln) for co, ln in self.user_chain(frame, 8)]
                for g in grad_inputs[1:8]:
                    self._remember_source(self.cut_events[eid], g)
                tag = (K_NOGRAD, path, line, name, eid, False)
        elif grad_inputs and outs[0].is_floating_point() is False and not flags & (CUT | CTOR):
            # argmax, comparisons, .long(): not differentiable, so the history ends here. Only tagged when
            # the inputs had history; an accuracy computation makes these too, and nothing reads the tag then.
            eid = self.new_cut_event("nondiff", path, line, name, frame, grad_inputs[0])
            tag = (K_CUT, path, line, name, eid, False)
        elif (best is None or (best[0] == K_CREATED and best[4] is None)) and not flags & CTOR and \
                self._frozen_params(args):
            # A frozen layer applied to data: the loss will not require grad because of the freeze.
            eid = self.new_cut_event("frozen", path, line, name, frame, None)
            for a in self.iter_tensors(args):
                site = self.rg_sites.get(id(a))
                if site is not None and isinstance(a, self.torch.nn.Parameter) and not a.requires_grad:
                    self.cut_events[eid]["freeze_site"] = site
                    break
            tag = (K_CREATED, path, line, name, eid, False)
        elif best is not None:
            tag = best
        elif flags & CTOR:
            tag = self.ctor_tag(args, path, line, name, frame)
        else:
            tag = (K_CREATED, path, line, name, None, False)
        for o in outs:
            if o.requires_grad:
                continue
            self.set_tag(o, tag)

    def _frozen_params(self, args):
        """How many frozen parameters (nn.Parameter with requires_grad=False) an op received directly."""
        P = self.torch.nn.Parameter
        n = 0
        for a in self.iter_tensors(args):
            if isinstance(a, P) and not a.requires_grad:
                n += 1
        return n

    def ctor_tag(self, args, path, line, name, frame):
        data = args[0] if args else None
        fid = id(frame) if frame is not None else None
        for eid, efid, rid, eline in reversed(self.recent_exits):
            # The same object, or nearby code in the same frame (`v = t.tolist()` ... `torch.tensor(v)`).
            if (rid is not None and rid == id(data)) or (fid is not None and efid == fid and 0 <= line - eline <= 10):
                ev = self.cut_events.get(eid)
                if ev is not None:
                    rew = self.new_cut_event("rewrap", path, line, name, frame, None)
                    rv = self.cut_events[rew]
                    rv["prior"] = eid
                    return (K_REWRAP, path, line, name, rew, False)
        return (K_CREATED, path, line, name, None, False)

    def on_exit(self, out, name, args, path, line, frame):
        src = args[0] if args and isinstance(args[0], self.Tensor) else None
        if src is None:
            return
        tg = self.tags.get(id(src))
        if src.requires_grad:
            eid = self.new_cut_event("cut", path, line, name, frame, src)
        elif tg is not None and tg[0] >= K_NOGRAD and tg[4] is not None:
            eid = tg[4]
        else:
            return
        self.event(path, line, "cut", name, src)
        if type(out) in (float, int) and src.requires_grad and name in ("item", "__float__"):
            self.item_numbers.append((out, path, line))
        keep_id = isinstance(out, (list, tuple)) or hasattr(out, "__array_interface__")
        self.recent_exits.append((eid, id(frame) if frame is not None else None, id(out) if keep_id else None, line))

    def note_gs905(self, path, line, site, tensor):
        # Inside a function that receives the carried tensor as an argument (`forward(self, x, h)`), the
        # graph is kept by the caller's loop: name the caller's line.
        try:
            f = self.site(1)
            if f is not None and f.f_code.co_filename == path and f.f_lineno == line:
                if _carried_is_argument(f.f_code, _carried_name(path, line)):
                    g = f.f_back
                    while g is not None and not self._is_user(g.f_code.co_filename):
                        g = g.f_back
                    if g is not None:
                        path, line = g.f_code.co_filename, g.f_lineno
        except Exception:
            pass
        since = range(site[3], len(self.backwards))
        if since and all(i in self.create_graph_calls for i in since):
            # Only create_graph=True calls ran since the graph was built (a differentiable inner step of
            # meta-learning): extending that graph is the point, and nothing was freed.
            return
        key = (path, line)
        if key in self.gs905:
            return
        first_bw = None
        for bpath, bline, _retain in self.backwards[site[3]:]:
            first_bw = (bpath, bline)
            break
        self.gs905[key] = {"path": path, "line": line, "backward": first_bw, "gen": self.n_backward}

    # ------------------------------------------------------------------------------ op errors
    def on_op_error(self, exc, name, args, path, line, frame):
        msg = str(exc)
        if "leaf Variable that requires grad is being used in an in-place operation" in msg:
            related = []
            t = args[0] if args and isinstance(args[0], self.Tensor) else None
            if t is not None:
                ls = self.leaf_sites.get(id(t))
                if ls:
                    related.append((ls[0], ls[1], "the leaf tensor was created here with requires_grad=True"))
            for p, ln in self.outer_user_lines(frame):
                related.append((p, ln, "called from here"))
            view = "a view of " if "a view of a leaf" in msg else ""
            self.finding(
                "GS906", path, line, "error",
                "In-place %s at line %d writes into %sa leaf tensor that requires grad, which autograd "
                "forbids; wrap the update in `with torch.no_grad():` or use an out-of-place op."
                % (name, line, view), related)
            self.explain(exc)
        elif "Can't call numpy() on Tensor that requires grad" in msg:
            related = []
            t = args[0] if args and isinstance(args[0], self.Tensor) else None
            gf = _gfn(t) if t is not None else None
            s = gf.metadata.get("gs") if gf is not None else None
            if s:
                related.append((s[0], s[1], "the tensor got its autograd history here (%s)" % s[2]))
            self.finding(
                "GS907", path, line, "error",
                "%s at line %d converts a tensor that requires grad to NumPy; call .detach() first "
                "(e.g. t.detach().cpu().numpy())." % (_code(path, line), line), related)
            self.explain(exc)

    # ------------------------------------------------------------------- saved tensor hooks
    def pack(self, t):
        self.busy += 1
        try:
            cur = self.cur
            try:
                v = t._version
            except Exception:
                return (t, None, cur, 0)
            self.seq += 1
            if cur[0] == self.script:
                self.event(cur[0], cur[1], "saved", cur[2], t)
            return (t.detach(), v, cur, self.seq)
        finally:
            self.busy -= 1

    def unpack(self, packed):
        t, v, cur, seq = packed
        if v is None or self.probing:
            return t
        self.busy += 1
        try:
            now = t._version
            if now != v:
                raise self.version_error(t, v, now, cur, seq)
            if self.data_mutations:
                self.check_data_mutation(t, cur, seq)
        finally:
            self.busy -= 1
        return t

    def version_error(self, t, v, now, cur, seq):
        spath, sline, sop = cur
        mut = None
        try:
            for m in self.mutlog.get(t.untyped_storage()._cdata, ()):
                if m[3] > seq:
                    mut = m
                    break
        except Exception:
            pass
        try:
            desc = "[%s %s]" % (t.type(), list(t.shape))
        except Exception:
            desc = "a tensor"
        where = []
        if mut is not None:
            where.append("modified in place by %s at %s:%d" % (mut[2], os.path.basename(mut[0] or "?"), mut[1]))
        if sline:
            where.append("saved for backward by %s at %s:%d" % (sop, os.path.basename(spath or "?"), sline))
        err = RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace "
            "operation: %s is at version %d; expected version %d instead. (gradsight trace: %s)"
            % (desc, now, v, "; ".join(where) or "the in-place write was not seen"))
        if mut is not None and mut[0] and len(mut) > 5 and mut[5]:
            bpath, bline = mut[5]
            self.finding(
                "GS901", bpath, bline, "error",
                "%s at line %d builds a module that writes in place (inplace=True): in its forward (line %d) it "
                "overwrites a tensor that %s at line %d saved for backward, so backward fails; build it with "
                "inplace=False." % (_code(bpath, bline), bline, mut[1], sop, sline),
                [(mut[0], mut[1], "the module's in-place %s runs here" % mut[2]),
                 (spath, sline, "%s saved this tensor for backward here" % sop)]
                + [(p, ln, "called from here") for p, ln in mut[6]])
        elif mut is not None and mut[0] and mut[2].endswith(".step()"):
            self.finding(
                "GS901", mut[0], mut[1], "error",
                "%s at line %d updates parameters in place that %s at line %d saved for backward, so the later "
                "backward fails; call backward before the optimizer step, or redo the forward after it."
                % (mut[2], mut[1], sop, sline),
                [(spath, sline, "%s saved the parameter for backward here" % sop)])
        elif mut is not None and mut[0]:
            self.finding(
                "GS901", mut[0], mut[1], "error",
                "In-place %s at line %d overwrites a tensor that %s at line %d saved for backward, so "
                "backward fails; use an out-of-place op (e.g. `x = x * 2`) or clone before writing."
                % (mut[2], mut[1], sop, sline),
                [(spath, sline, "%s saved this tensor for backward here" % sop)]
                + [(p, ln, "called from here") for p, ln in mut[6]])
        elif sline:
            self.finding(
                "GS901", spath, sline, "error",
                "A tensor that %s at line %d saved for backward was later modified in place, so backward "
                "fails; the in-place write happened outside traced Python code." % (sop, sline))
        self.explain(err)
        return err

    def check_data_mutation(self, t, cur, seq):
        try:
            key = t.untyped_storage()._cdata
        except Exception:
            return
        m = self.data_mutations.get(key)
        if m is None or m[3] <= seq:
            return
        spath, sline, sop = cur
        self.finding(
            "GS901", m[0], m[1], "warning",
            "In-place %s through .data at line %d changes a tensor that %s at line %d saved for backward; "
            "autograd cannot see writes through .data, so the gradient is silently wrong." % (m[2], m[1], sop, sline),
            [(spath, sline, "%s saved this tensor for backward here" % sop)])

    # --------------------------------------------------------------------- backward wrapper
    def wrap_backward(self, orig, is_grad):
        tracer = self
        torch = self.torch

        def wrapper(*args, **kwargs):
            if tracer.busy:
                return orig(*args, **kwargs)
            with torch._C.DisableTorchFunction():
                return tracer.on_backward(orig, is_grad, args, kwargs)

        wrapper.__wrapped__ = orig
        wrapper.__name__ = getattr(orig, "__name__", "backward")
        wrapper.__doc__ = getattr(orig, "__doc__", None)
        return wrapper

    def wrap_from_numpy(self, orig):
        """torch.from_numpy is invisible to function modes; tag its result like torch.tensor's."""
        tracer = self

        def from_numpy(*args, **kwargs):
            out = orig(*args, **kwargs)
            if tracer.busy or tracer.stopping is not None:
                return out
            try:
                frame = tracer.site(2)
                path, line = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else (None, 0)
                tracer.set_tag(out, tracer.ctor_tag(args, path, line, "from_numpy", frame))
                tracer.event(path, line, "op", "from_numpy", out)
            except Exception as exc:
                tracer.internal(exc)
            return out

        from_numpy.__wrapped__ = orig
        from_numpy.__doc__ = orig.__doc__
        return from_numpy

    def on_backward(self, orig, is_grad, args, kwargs):
        if self.stopping is not None:
            raise _Stop(self.stopping)
        if self.stop_pending:
            self.stopping = "max-steps"
            raise _Stop("max-steps")
        frame = self.site(3)
        path, line = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else (None, 0)
        roots = args[0] if args else kwargs.get("outputs" if is_grad else "tensors")
        if isinstance(roots, self.Tensor):
            roots = [roots]
        roots = [r for r in (roots or ()) if isinstance(r, self.Tensor)]
        retain = kwargs.get("retain_graph")
        if retain is None and len(args) > (3 if is_grad else 2):
            retain = args[3 if is_grad else 2]
        if retain is None:
            retain = kwargs.get("create_graph", False) or (len(args) > (4 if is_grad else 3) and bool(args[4 if is_grad else 3]))
        op = "grad" if is_grad else "backward"
        self.event(path, line, "backward", op, roots[0] if roots else None)
        if is_grad:
            ins = args[1] if len(args) > 1 else kwargs.get("inputs")
            self._grad_inputs = [ins] if isinstance(ins, self.Tensor) else list(ins or ())

        self.busy += 1
        try:
            nograd = [r for r in roots if not r.requires_grad]
            if nograd:
                self.explain_no_grad(nograd[0], frame, path, line, op)
            walk = self.pre_backward_walk(roots) if (self.attached or self._has_rewrap_leaf(roots)) else None
            if self.kept_cands:
                self.mark_kept(roots)
            if self.item_terms:
                self.check_item_terms(roots, path, line)
        except Exception as exc:
            self.internal(exc)
            walk = None
        finally:
            self.busy -= 1

        mem_before = self._cuda_mem()
        freed_before = self._cuda_freed() if mem_before is not None else None
        gen = self.n_backward
        self.backwards.append((path, line, bool(retain)))
        self.backward_code.append(frame.f_code if frame is not None else None)
        create = kwargs.get("create_graph")
        if create is None and len(args) > (4 if is_grad else 3):
            create = args[4 if is_grad else 3]
        if create:
            self.create_graph_calls.add(len(self.backwards) - 1)
        try:
            result = orig(*args, **kwargs)
        except RuntimeError as exc:
            self.busy += 1
            try:
                self.on_backward_error(exc, roots, path, line, frame, gen, op)
            except Exception as exc2:
                self.internal(exc2)
            finally:
                self.busy -= 1
            self.n_backward += 1
            raise
        self.n_backward += 1
        self.busy += 1
        try:
            if mem_before is not None:
                after = self._cuda_mem()
                key = (line, "backward", op)
                if key in self.events and "memory_before_backward" not in self.events[key]:
                    self.events[key]["memory_before_backward"] = mem_before
                    self.events[key]["memory_after_backward"] = after
                    freed = self._cuda_freed()
                    if freed is not None and freed_before is not None:
                        self.events[key]["memory_freed_by_backward"] = freed - freed_before
            self.after_backward(walk, path, line, op, frame, roots)
            for ev in self._holding:
                ev["src_gfs"] = []  # release the graphs kept for GS904
            self._holding = []
        except Exception as exc:
            self.internal(exc)
        finally:
            self.busy -= 1
        self.count_step()
        return result

    def _cuda_mem(self):
        if self.device != "cuda":
            return None
        try:
            return int(self.torch.cuda.memory_allocated())
        except Exception:
            return None

    def _cuda_freed(self):
        """Bytes the caching allocator has handed back so far (a counter): its growth across a backward is what
        the backward released, the graph's saved tensors and outputs included. `memory_allocated()` alone cannot
        say that: the first backward also allocates every `.grad` and the cuBLAS workspace, so the memory after a
        backward may well exceed the memory before it."""
        try:
            return int(self.torch.cuda.memory_stats().get("allocated_bytes.all.freed", 0))
        except Exception:
            return None

    def _has_rewrap_leaf(self, roots):
        for r in roots:
            if id(r) in self.tags:
                return True
        return False

    def count_step(self):
        if self.max_steps and self.max_steps > 0:
            if self.opt_steps >= self.max_steps or (self.opt_steps == 0 and self.n_backward >= self.max_steps):
                self.stop_pending = True

    def steps(self):
        return self.opt_steps if self.opt_steps else self.n_backward

    def explain_no_grad(self, root, frame, path, line, op):
        name = self.name_in_frame(frame, root)
        call = "%s.%s()" % (name, op) if name and op == "backward" else "%s()" % op
        tag = self.tags.get(id(root))
        kind = None
        bw = (path, line, "%s() is called here" % op)
        msg_bw_tail = "element 0 of tensors does not require grad and does not have a grad_fn"
        cause = None  # (path, line, description)
        related = []
        if tag is not None:
            kind, tpath, tline, top, eid = tag[0], tag[1], tag[2], tag[3], tag[4]
            ev = self.cut_events.get(eid) if eid is not None else None
            if ev is not None and ev["kind"] == "rewrap" and ev.get("prior") in self.cut_events:
                pv = self.cut_events[ev["prior"]]
                cause = (pv["path"], pv["line"], "%s at line %d leaves autograd (.%s() returns plain Python/NumPy data)"
                         % (_code(pv["path"], pv["line"]), pv["line"], pv["op"]))
                related.append((tpath, tline, "%s rebuilds a tensor from that data, without history" % _code(tpath, tline)))
            elif ev is not None and ev["kind"] == "rewrap":
                cause = (tpath, tline, "%s at line %d builds a new tensor from plain data, without history"
                         % (_code(tpath, tline), tline))
            elif ev is not None and ev["kind"] == "nograd":
                ctx = _grad_context(ev.get("chain") or [(tpath, tline)])
                if ctx is not None:
                    cpath, cline, inner_path, inner_line = ctx
                    cause = (cpath, cline, "%s at line %d disables gradient tracking, so %s at line %d inside it "
                             "builds no graph" % (_code(cpath, cline), cline, _code(inner_path, inner_line), inner_line))
                    if (inner_path, inner_line) != (tpath, tline):
                        related.append((inner_path, inner_line, "the call under the context"))
                    related.append((tpath, tline, "%s runs without gradient tracking here" % top))
                else:
                    cause = (tpath, tline, "%s at line %d runs with gradient tracking disabled (torch.no_grad(), "
                             "inference_mode or set_grad_enabled(False))" % (_code(tpath, tline), tline))
            elif ev is not None and ev["kind"] == "nondiff":
                cause = (tpath, tline, "%s at line %d is not differentiable (.%s() returns values without a "
                         "gradient), so the history ends there" % (_code(tpath, tline), tline, top))
            elif ev is not None and ev["kind"] == "frozen" and ev.get("freeze_site"):
                fpath, fline = ev["freeze_site"]
                cause = (fpath, fline, "%s at line %d freezes the parameters that %s at line %d uses, and nothing "
                         "else %s is computed from requires grad; unfreeze what should learn" % (
                             _code(fpath, fline), fline, _code(tpath, tline), tline,
                             "`%s`" % name if name else "the loss"))
                related.append((tpath, tline, "the frozen parameters are used here"))
            elif ev is not None and ev["kind"] == "frozen":
                cause = (tpath, tline, "%s at line %d runs with frozen parameters (requires_grad=False) on inputs "
                         "that do not require grad, so nothing %s is computed from requires grad; unfreeze what "
                         "should learn (requires_grad_(True))" % (_code(tpath, tline), tline,
                                                                 "`%s`" % name if name else "the loss"))
            elif ev is not None and ev["kind"] == "cut":
                how = ("torch.%s() copies values, not history" % top) if top in _CTOR_NAMES else ".%s()" % top
                cause = (tpath, tline, "%s at line %d cuts the autograd history (%s)" % (_code(tpath, tline), tline, how))
                related.extend((p, ln, "called from here") for p, ln in ev.get("outer", ()))
            elif kind == K_CREATED:
                cause = (tpath, tline, "%s at line %d creates a tensor without requires_grad=True, and nothing "
                         "%s is computed from requires grad" % (_code(tpath, tline), tline,
                                                                "`%s`" % name if name else "the loss"))
        subject = name or "the tensor"
        if cause is not None and cause[1]:
            started = "never started" if kind == K_CREATED else "was cut"
            self.finding(
                "GS903", cause[0], cause[1], "error",
                "%s, so %s at line %d fails: %s has no grad_fn and does not require grad."
                % (cause[2][0].upper() + cause[2][1:], call, line, subject),
                related + [bw])
            self.finding(
                "GS903", path, line, "error",
                "%s fails ('%s'): its autograd history %s at line %d." % (call, msg_bw_tail, started, cause[1]),
                [(cause[0], cause[1], "history %s here" % ("starts without grad" if kind == K_CREATED else "cut"))]
                + related)
        else:
            self.finding(
                "GS903", path, line, "error",
                "%s fails ('%s'): %s has no autograd history; make sure an input requires grad and that nothing "
                "detaches it." % (call, msg_bw_tail, subject), related)
        self.pending_explain = ("nograd", line)

    def name_in_frame(self, frame, obj):
        if frame is None:
            return None
        try:
            for space in (frame.f_locals, frame.f_globals):
                for k, v in space.items():
                    if v is obj and not k.startswith("__"):
                        return k
        except Exception:
            pass
        return None

    def name_for_node(self, frame, node):
        if frame is None:
            return None
        T = self.Tensor
        try:
            f = frame
            while f is not None:
                for space in (f.f_locals, f.f_globals):
                    for k, v in space.items():
                        if isinstance(v, T) and not k.startswith("__") and _gfn(v) is node:
                            return k
                        if isinstance(v, (tuple, list)) and len(v) < 8:
                            for x in v:
                                if isinstance(x, T) and _gfn(x) is node:
                                    return k
                f = f.f_back
        except Exception:
            pass
        return None

    # ------------------------------------------------------------------------- graph walks
    def pre_backward_walk(self, roots):
        """Walk the graph about to be backpropagated: reached leaves and cut events attached to it."""
        reached = set()
        eids = []
        rewrap_leaves = []
        seen = set()
        stack = []
        for r in roots:
            gf = r.grad_fn
            if gf is not None:
                stack.append(gf)
            elif r.requires_grad:
                reached.add(id(r))
                if id(r) in self.tags:
                    rewrap_leaves.append(r)
        n = 0
        while stack and n < 50000:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            n += 1
            var = getattr(node, "variable", None)
            if var is not None:
                reached.add(id(var))
                if id(var) in self.tags:
                    rewrap_leaves.append(var)
            try:
                md = node.metadata
                cuts = md.get("gs_cuts")
                if cuts:
                    eids.extend(cuts)
            except Exception:
                pass
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        for leaf in rewrap_leaves:
            tg = self.tags.get(id(leaf))
            if tg and tg[4] is not None:
                eids.append(tg[4])
        found = set(eids)
        self.attached -= found
        if len(self.attached) > 256:
            self.attached.clear()
        return {"reached": reached, "eids": list(dict.fromkeys(eids))}

    def source_leaves(self, ev, limit=5000):
        leaves = []
        for w in ev.get("src_leaves", ()):
            t = w()
            if t is not None:
                leaves.append(t)
        gfs = ev.get("src_gfs")
        if gfs:
            seen = set()
            stack = list(gfs)
            while stack and len(seen) < limit:
                node = stack.pop()
                if id(node) in seen:
                    continue
                seen.add(id(node))
                var = getattr(node, "variable", None)
                if var is not None:
                    leaves.append(var)
                for nxt, _ in node.next_functions:
                    if nxt is not None:
                        stack.append(nxt)
        return leaves

    def after_backward(self, walk, path, line, op, frame, roots):
        bw_index = len(self.backwards) - 1
        call = None
        if walk is not None:
            for eid in walk["eids"]:
                ev = self.cut_events.get(eid)
                if ev is None:
                    continue
                root_ev = ev
                if ev["kind"] == "rewrap" and ev.get("prior") in self.cut_events:
                    root_ev = self.cut_events[ev["prior"]]
                for leaf in self.source_leaves(root_ev):
                    i = id(leaf)
                    if i in walk["reached"]:
                        continue
                    old = self.candidates.get(i)
                    if old is not None and old["ref"]() is leaf:
                        continue
                    r = self.received.get(i)
                    if r is not None and r() is leaf:
                        continue
                    if len(self.candidates) > 10000:
                        break
                    if call is None:
                        rname = self.name_in_frame(frame, roots[0]) if roots else None
                        call = "%s.%s" % (rname, op) if rname and op == "backward" else op
                    self.candidates[i] = {"ref": weakref.ref(leaf), "event": root_ev,
                                          "rewrap": ev if ev is not root_ev else None,
                                          "backward": (path, line, call), "bw_index": bw_index, "name": None}
        # Which candidates got a gradient from this or an earlier backward?
        for i, c in list(self.candidates.items()):
            leaf = c["ref"]()
            if leaf is None:
                continue  # died without a gradient: still reported at the end
            if leaf.grad is not None:
                self.received[i] = c["ref"]
                del self.candidates[i]
            elif c["name"] is None:
                c["name"] = self.leaf_name(leaf)

    def leaf_name(self, leaf):
        """A readable name for a leaf: a module parameter path or a variable name in user frames."""
        nn = self.torch.nn
        f = self.site(3)
        try:
            while f is not None:
                for space in (f.f_locals, f.f_globals):
                    for k, v in list(space.items()):
                        if k.startswith("__"):
                            continue
                        if v is leaf:
                            return k
                        if isinstance(v, nn.Module):
                            for pn, p in v.named_parameters():
                                if p is leaf:
                                    return "%s.%s" % (k, pn)
                f = f.f_back
        except Exception:
            pass
        return None

    def on_backward_error(self, exc, roots, path, line, frame, gen, op):
        msg = str(exc)
        if any(exc is e for e in self.explained):
            return
        if self.pending_explain is not None and self.pending_explain[1] == line and "does not require grad" in msg:
            self.explain(exc)
            self.pending_explain = None
            return
        if "backward through the graph a second time" in msg:
            self.explain_freed(exc, roots, path, line, frame, op, gen)
            return
        if "appears to not have been used in the graph" in msg and op == "grad":
            import re

            m = re.search(r"at index (\d+)", msg)
            inputs = self._grad_inputs
            k = int(m.group(1)) if m else 0
            t = inputs[k] if inputs and k < len(inputs) else None
            site = self.rg_sites.get(id(t)) if t is not None else None
            if site is not None:
                tname = self.name_in_frame(frame, t)
                subject = "`%s`" % tname if tname else "the input"
                self.finding(
                    "GS900", site[0], site[1], "error",
                    "%s at line %d makes %s require grad only now, after the computation that should depend on it "
                    "ran without recording it, so grad() at line %d fails (the differentiated tensor was not used "
                    "in the graph); call requires_grad_() before computing with it." % (
                        _code(site[0], site[1]), site[1], subject, line),
                    [(path, line, "grad() asks for the gradient of %s here" % subject)])
                self.explain(exc)
                return
        if "returned an incorrect number of gradients" in msg:
            where = self._function_backward_return(roots, msg)
            if where is not None:
                bpath, bline, cls, expected, got = where
                self.finding(
                    "GS900", bpath, bline, "error",
                    "%s.backward returns %s gradient(s) at line %d, but forward takes %s input(s) after ctx, so "
                    "backward at line %d fails; return one value per forward input, None for those that need no "
                    "gradient (e.g. `return grad_out, None`)." % (cls, got, bline, expected, line),
                    [(path, line, "the backward that runs %s.backward" % cls)])
                self.explain(exc)
                return
        if "implicitly created only for scalar outputs" in msg:
            # The line to change is where the unreduced value was made, not the backward.
            for r in roots:
                if r.numel() == 1:
                    continue
                gf = _gfn(r)
                s = gf.metadata.get("gs") if gf is not None else None
                if s and s[1]:
                    rname = self.name_in_frame(frame, r)
                    subject = "`%s`" % rname if rname else "the tensor"
                    call = "%s.%s()" % (rname, op) if rname and op == "backward" else "%s()" % op
                    self.finding(
                        "GS900", s[0], s[1], "error",
                        "%s at line %d makes %s with shape %s, not a scalar, so %s at line %d fails (RuntimeError: "
                        "grad can be implicitly created only for scalar outputs). Reduce it to the loss you mean "
                        "(`.mean()` or `.sum()`, or reduction='mean' on the loss module); pass "
                        "`gradient=torch.ones_like(%s)` to backward only if you want the sum of per-element "
                        "gradients." % (_code(s[0], s[1]), s[1], subject, list(r.shape), call, line,
                                       rname or "t"),
                        [(path, line, "%s needs a scalar here" % call)] + [
                            (p, ln, "called from here") for p, ln in self.outer_user_lines(frame)[:2]])
                    # And the failing line, naming the cause: an editor shows both.
                    self.finding(
                        "GS900", path, line, "error",
                        "%s fails: %s has shape %s, made at line %d without reducing it to a scalar (RuntimeError: "
                        "grad can be implicitly created only for scalar outputs)." % (call, subject, list(r.shape), s[1]),
                        [(s[0], s[1], "%s is made here" % subject)])
                    self.explain(exc)
                    return
        # Another backward error: point at where the root came from.
        related = []
        for r in roots:
            gf = r.grad_fn
            s = gf.metadata.get("gs") if gf is not None else None
            if s and s[1] != line:
                related.append((s[0], s[1], "%s (shape %s) was computed here by %s" % (
                    self.name_in_frame(frame, r) or "the tensor", list(r.shape), s[2])))
        self._backward_related = related

    def _function_backward_return(self, roots, msg):
        """For a custom autograd.Function whose backward returns the wrong number of gradients: the file and
        line of its `return`, the class name, and the expected and returned counts."""
        import ast
        import re

        m = re.search(r"function (\w+?)Backward returned an incorrect number of gradients \(expected (\d+), got (\d+)\)",
                      msg)
        if not m:
            return None
        target = m.group(1) + "Backward"
        stack = [_gfn(r) for r in roots]
        seen = set()
        cls = None
        while stack and len(seen) < 5000:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if type(node).__name__ == target and hasattr(node, "_forward_cls"):
                cls = node._forward_cls
                break
            stack.extend(n for n, _ in node.next_functions)
        code = getattr(getattr(cls, "backward", None), "__code__", None)
        if code is None:
            return None
        src = "".join(linecache.getlines(code.co_filename))
        try:
            tree = ast.parse(src)
        except SyntaxError:
            return None
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name == "backward" and fn.lineno <= code.co_firstlineno + len(
                    getattr(fn, "decorator_list", ())) and fn.end_lineno >= code.co_firstlineno:
                rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
                if rets:
                    return code.co_filename, rets[0].lineno, cls.__name__, m.group(2), m.group(3)
        return None

    def _node_freed(self, node):
        cls = type(node)
        attrs = self._node_saved_attrs.get(cls)
        if attrs is None:
            attrs = [a for a in dir(node) if a.startswith("_saved_")]
            if not attrs and hasattr(node, "saved_tensors"):
                attrs = ["saved_tensors"]
            self._node_saved_attrs[cls] = attrs
        self.probing = True
        try:
            for a in attrs:
                try:
                    getattr(node, a)
                except RuntimeError as e:
                    if "second time" in str(e) or "after they have already been freed" in str(e):
                        return True
                except Exception:
                    pass
        finally:
            self.probing = False
        return False

    def explain_freed(self, exc, roots, path, line, frame, op, gen_now):
        """Find the node of an older graph that this backward reached, and the newer node that reached it.

        The failing backward has already freed the nodes it ran before failing, so freed-ness alone does
        not tell old from new: nodes carry the backward count at their creation ("gen") in their metadata,
        and internal nodes of a composite op inherit their parent's gen.
        """
        from collections import deque

        queue = deque()
        for r in roots:
            if r.grad_fn is not None:
                queue.append((r.grad_fn, None, None, None))
        seen = set()
        hit = None
        fallback = None
        n = 0
        while queue and n < 50000:
            node, parent_site, parent_gen, parent_chain = queue.popleft()
            if id(node) in seen:
                continue
            seen.add(id(node))
            n += 1
            try:
                site = node.metadata.get("gs")
            except Exception:
                site = None
            node_gen = site[3] if site else parent_gen
            if node_gen is not None and node_gen < gen_now:
                freed = self._freed_below(node)
                if freed is not None:
                    hit = (node, site or self._descendant_site(node), parent_site, parent_chain)
                    break
                if fallback is None:
                    fallback = (node, site, parent_site, parent_chain)
            here = site or parent_site
            chain = parent_chain
            if site:
                try:
                    chain = node.metadata.get("gs_chain")
                except Exception:
                    chain = None
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    queue.append((nxt, here, node_gen, chain))
        if hit is None:
            hit = fallback
        first_bw = None
        fb_index = None
        if hit is not None:
            node, site, parent_site, _chain = hit
            if site is None:
                site = self._descendant_site(node)
            gen = site[3] if site else 0
            for i in range(gen, len(self.backwards) - 1):
                bpath, bline, retain = self.backwards[i]
                if not retain:
                    first_bw, fb_index = (bpath, bline), i
                    break
        if first_bw is None:
            for i, (bpath, bline, retain) in enumerate(self.backwards[:-1]):
                if not retain:
                    first_bw, fb_index = (bpath, bline), i
                    break
        same_call = first_bw == (path, line)
        if first_bw is None:
            fb_text = "an earlier backward"
        elif same_call:
            # The usual loop bug: the same line, one iteration earlier. Say so, or "line 30 freed it" reads
            # as nonsense next to "line 30 fails".
            fb_text = "the backward at line %d in the previous iteration" % first_bw[1]
        else:
            fb_text = "the backward at line %d" % first_bw[1]
        rname = self.name_in_frame(frame, roots[0]) if roots else None
        call = "%s.%s()" % (rname, op) if rname and op == "backward" else "%s()" % op
        related_fb = [(first_bw[0], first_bw[1], "%s freed the graph's saved tensors here" % (
            "in the previous iteration, this backward" if same_call else "this earlier backward"))] if first_bw else []
        bw_rel = (path, line, "the backward through the freed graph fails here")
        if hit is None or hit[2] is None:
            # The root itself belongs to an already backpropagated graph: the same loss, backpropagated again.
            self.finding(
                "GS902", path, line, "error",
                "%s at line %d runs backward again through a graph that %s already freed. If a second "
                "backward through the same loss is intended (two gradients of one loss), pass "
                "retain_graph=True to the first backward only; if not, remove the extra call or recompute the "
                "loss before it." % (call, line, fb_text), related_fb)
            self.explain(exc)
            return
        node, site, parent_site, chain = hit
        name = self.name_for_node(frame, node)
        cpath, cline = (site[0], site[1]) if site else (None, 0)
        ppath, pline = parent_site[0], parent_site[1]
        # Where the old node was used before the backward that freed it, and after it.
        earlier_use = None
        try:
            used = node.metadata.get("gs_used") or ()
        except Exception:
            used = ()
        for ugen, upath, uline in used:
            if fb_index is not None and ugen <= fb_index and upath and uline:
                earlier_use = (upath, uline)
                break
        # Where, in the code that calls backward, the old graph came in (e.g. `out, h = model(x, h)`),
        # when the consuming op ran deeper, inside a model's forward.
        outer = None
        if chain and frame is not None:
            for co, ln in chain[1:]:
                if co is frame.f_code:
                    outer = (co.co_filename, ln)
                    break
        what = "`%s`" % name if name else "a tensor"
        created = [(cpath, cline, "%s was computed here, before %s freed its graph" % (what, fb_text))] if cline else []
        if cpath == ppath and cline and pline <= cline:
            # The same code consumes its own output from an earlier iteration: a loop-carried graph.
            inner = []
            inner_code = chain[0][0] if chain else None
            inner_name = _carried_name(ppath, pline)
            if outer is not None and inner_name and not _carried_is_argument(inner_code, inner_name):
                # The carrying assignment is inside the call (`self.center = m * self.center + ...` in a
                # forward): that is the line to change; the loop line goes to `related`.
                inner = [(outer[0], outer[1], "called from here, in every iteration")]
            elif outer is not None:
                inner = [(ppath, pline, "inside the call, %s uses the old graph" % _code(ppath, pline))]
                ppath, pline = outer
            carried = _carried_name(ppath, pline) or name
            cwhat = "`%s`" % carried if carried else "a tensor"
            fix = ("`%s = %s.detach()`" % (carried, carried)) if carried else "`.detach()`"
            self.finding(
                "GS902", ppath, pline, "error",
                "%s at line %d feeds %s from the previous iteration, whose graph %s already freed, into "
                "this iteration's graph, so %s at line %d fails; detach the carried state (%s) before "
                "reusing it (truncated backpropagation through time)." % (
                    _code(ppath, pline), pline, cwhat, fb_text, call, line, fix),
                related_fb + [bw_rel] + inner, fix=self._detach_fix(ppath, pline, carried))
        elif earlier_use is not None and earlier_use == (ppath, pline) and cline:
            # The same line used the tensor before and after the backward: it was computed once and kept (a
            # cache on a module, a buffer of log-probabilities never cleared) while the graph under it was freed.
            reuse = [(ppath, pline, "%s is used again here after its graph was freed" % what)]
            if outer is not None and outer[1] != pline:
                reuse.append((outer[0], outer[1], "called from here"))
            self.finding(
                "GS902", cpath, cline, "error",
                "%s at line %d computes %s once and it is kept across backward calls (in an attribute, a list or "
                "a variable): %s freed its graph, then line %d uses it again and %s at line %d fails. Compute it "
                "anew for each forward, or clear the stored tensors after each update; store `.detach()` only "
                "if no gradient should flow through it." % (_code(cpath, cline), cline, what, fb_text, pline,
                                                             call, line),
                reuse + related_fb + [bw_rel])
        elif (first_bw is not None and fb_index is not None and frame is not None
              and self.backward_code[fb_index] is not frame.f_code and not same_call):
            # The earlier backward ran in another function, during the forward (a module that backpropagates
            # an auxiliary loss inside its forward): it freed the graph that the training loop's backward needs.
            bpath, bline = first_bw
            self.finding(
                "GS902", bpath, bline, "error",
                "%s at line %d backpropagates while the caller's graph is still being built: it frees the graph "
                "of %s (built at line %d), which is used again at line %d, so %s at line %d fails. To train only "
                "this part with that loss, compute the loss from detached inputs (`.detach()`); to train everything "
                "with it, return the loss and add it to the main loss instead of calling backward here." % (
                    _code(bpath, bline), bline, what, cline, pline, call, line),
                [(ppath, pline, "%s from the freed graph is used again here" % what)] + created + [bw_rel])
        elif earlier_use is not None and first_bw is not None:
            # Two losses share a tensor (a GAN's `fake`, one model output under two losses). Which use should
            # detach depends on which optimizer stepped in between: if the step after the earlier backward
            # trained what produced the tensor (a generator step), the later use must not reach it (the
            # discriminator step): detach there; if it trained something else, the earlier use was the
            # discriminator's: detach there. With no step in between, both losses train the producer: sum them.
            upath, uline = earlier_use
            new_use = (ppath, pline) if outer is None or outer[1] == pline else outer
            trained = self._producer_trained_between(node, fb_index, gen_now)
            dname = "`%s.detach()`" % name if name else "`.detach()`"
            if trained is None:
                self.finding(
                    "GS902", path, line, "error",
                    "%s at line %d goes through the graph of %s (built at line %d), which %s already freed: line "
                    "%d brought it into that earlier loss and line %d uses it again, with no optimizer step in "
                    "between. If both losses should train what produced it, add them and call backward once, or "
                    "pass retain_graph=True to the backward at line %d; if the earlier loss should not reach it, "
                    "use %s at line %d." % (call, line, what, cline, fb_text, uline, new_use[1], first_bw[1],
                                            dname, uline),
                    [(upath, uline, "the earlier loss used %s here" % what),
                     (new_use[0], new_use[1], "%s from the freed graph is used again here" % what)] + created
                    + related_fb)
            elif trained:
                self.finding(
                    "GS902", new_use[0], new_use[1], "error",
                    "%s at line %d uses %s (built at line %d) again after %s backpropagated through it and an "
                    "optimizer step trained what produced it; its graph is freed, so %s at line %d fails. This "
                    "loss should not reach the producer (a GAN's discriminator step): use %s here. Do not detach "
                    "at line %d, where gradients must flow (the generator step)." % (
                        _code(new_use[0], new_use[1]), new_use[1], what, cline, fb_text, call, line, dname, uline),
                    [(upath, uline, "the earlier loss used %s here and must keep its gradients" % what)] + created
                    + related_fb + [bw_rel], fix=self._detach_fix(new_use[0], new_use[1], name))
            else:
                self.finding(
                    "GS902", upath, uline, "error",
                    "%s at line %d brings %s (built at line %d) into the loss that %s backpropagates, which frees "
                    "its graph; the step after it does not train what produced %s, so this use should not reach "
                    "it (a GAN's discriminator step): use %s here. Line %d uses it again where gradients must "
                    "flow (the generator step): do not detach there; %s at line %d then works." % (
                        _code(upath, uline), uline, what, cline, fb_text, what, dname, new_use[1], call, line),
                    [(new_use[0], new_use[1], "%s is used again here, where gradients must flow" % what)] + created
                    + related_fb + [bw_rel], fix=self._detach_fix(upath, uline, name))
        else:
            if outer is not None and outer[1] != pline:
                created.append((ppath, pline, "inside the call, %s uses it" % _code(ppath, pline)))
                ppath, pline = outer
            self.finding(
                "GS902", path, line, "error",
                "%s at line %d backpropagates into the graph of %s (built at line %d), which %s already "
                "freed; line %d carried it into this graph. Detach it there if the part that produced it should "
                "not learn from this loss; if both backward passes should reach it, add the losses and call "
                "backward once, or pass retain_graph=True to the first backward." % (
                    call, line, what, cline, fb_text, pline),
                [(ppath, pline, "%s from the freed graph is reused here" % what)] + created + related_fb)
        self.explain(exc)

    def _producer_trained_between(self, node, fb_index, gen_now):
        """Did an optimizer step between the backward that freed `node`'s graph and the failing one update a
        leaf under `node`? None when no step ran in between."""
        steps = [ref() for nb, ref in self.step_log if fb_index is not None and fb_index < nb <= gen_now]
        steps = [o for o in steps if o is not None]
        if not steps:
            return None
        leaves = {id(t) for t in self.source_leaves({"src_gfs": [node]})}
        for opt in steps:
            for group in getattr(opt, "param_groups", ()):
                for p in group.get("params", ()):
                    if id(p) in leaves:
                        return True
        return False

    def _detach_fix(self, path, line, name):
        """The quick fix the static rule GS402 offers: `.detach()` inserted after the first read of `name` on
        `line` in the value of an assignment or in a call's arguments (not after an assignment target)."""
        if not name or not path or not line:
            return None
        import ast

        text = linecache.getline(path, line)
        if not text:
            return None
        stripped = text.strip()
        indent = len(text) - len(text.lstrip())
        try:
            tree = ast.parse(stripped)
        except SyntaxError:
            return None
        best = None
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                if best is None or node.col_offset < best.col_offset:
                    best = node
        if best is None:
            return None
        # ast offsets are UTF-8 bytes; the JSON's columns are 1-based code points.
        raw = stripped.encode("utf-8")
        end = len(raw[: best.end_col_offset].decode("utf-8", "replace"))
        col = indent + end + 1
        return {"title": "Detach `%s` here" % name, "applicability": "unsafe",
                "edits": [{"line": line, "column": col, "end_line": line, "end_column": col,
                           "new_text": ".detach()"}]}

    def _freed_below(self, node, limit=500):
        """The first node at or below `node` whose saved tensors were freed, or None."""
        stack = [node]
        seen = set()
        while stack and len(seen) < limit:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if self._node_freed(n):
                return n
            for nxt, _ in n.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        return None

    def _descendant_site(self, node):
        stack = [node]
        seen = set()
        while stack and len(seen) < 200:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            try:
                s = n.metadata.get("gs")
            except Exception:
                s = None
            if s:
                return s
            for nxt, _ in n.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        return None

    # ---------------------------------------------------------------------------- optimizer
    def on_step_pre(self, optimizer, args, kwargs):
        if self.busy:
            return
        if self.stopping is not None:
            raise _Stop(self.stopping)
        if self.stop_pending:
            self.stopping = "max-steps"
            raise _Stop("max-steps")
        frame = self.site(2)
        if frame is not None:
            self.step_line, self.step_frame = frame.f_lineno, id(frame)
            self.busy += 1
            try:
                oname = self.name_in_frame(frame, optimizer) or type(optimizer).__name__
            finally:
                self.busy -= 1
            self.step_label = "%s.step()" % oname
            # `args` holds the optimizer itself (the bound method's self), then step's own arguments.
            if (len(args) > 1 and args[1] is not None) or kwargs.get("closure") is not None:
                return  # LBFGS and friends compute the gradients inside step(closure)
            self.busy += 1
            try:
                # Property reads (.grad, .requires_grad) would each pass through the function mode otherwise.
                with self.torch._C.DisableTorchFunction():
                    self.check_step(optimizer, frame, oname)
            except Exception as exc:
                self.internal(exc)
            finally:
                self.busy -= 1

    def check_step(self, optimizer, frame, oname):
        """GS908 (a step with no gradients) and GS909 (gradients never reset between two steps)."""
        # The parameter list is cached per optimizer (rebuilt when its groups change size): this runs every step.
        groups = getattr(optimizer, "param_groups", ())
        shape = tuple(len(g.get("params", ())) for g in groups)
        cached = self._opt_params.get(id(optimizer))
        if cached is None or cached[0] != shape or cached[1]() is not optimizer:
            T = self.Tensor
            cached = (shape, weakref.ref(optimizer),
                      [p for g in groups for p in g.get("params", ()) if isinstance(p, T)])
            self._opt_params[id(optimizer)] = cached
        params = [p for p in cached[2] if p.requires_grad]
        if not params:
            return
        path, line = frame.f_code.co_filename, frame.f_lineno
        with_grad = [p for p in params if p.grad is not None]
        last_bw = self.backwards[-1] if self.backwards else None
        zero = self.last_zero_grad  # (path, line, n_backward at the call) of the latest zero_grad()
        prev = self.step_state.get(id(optimizer))
        cleared_after_bw = (zero is not None and self.n_backward > 0 and zero[2] == self.n_backward
                            and (prev is None or prev["bw"] < self.n_backward))
        empty = not with_grad
        if not empty and cleared_after_bw:
            # zero_grad(set_to_none=False) leaves zeros, not None.
            empty = all(not bool(p.grad.any()) for p in with_grad[:64])
        bw_code = self.backward_code[-1] if self.backward_code else None
        step_first = last_bw is not None and bw_code is frame.f_code and last_bw[1] > line
        if empty:
            if step_first:
                # In the same loop body the backward comes after the step: every step sees the gradients
                # cleared (or never computed), and the backward's gradients are cleared before the next one.
                self.finding(
                    "GS908", path, line, "warning",
                    "%s.step() at line %d runs before backward() at line %d computes the gradients, so every "
                    "step finds none and changes nothing; call backward() before step()." % (oname, line, last_bw[1]),
                    [(last_bw[0], last_bw[1], "backward() runs here, after the step")]
                    + ([(zero[0], zero[1], "zero_grad() clears its gradients before the next step")]
                       if cleared_after_bw else []))
            elif cleared_after_bw:
                self.finding(
                    "GS908", zero[0], zero[1], "warning",
                    "%s at line %d clears the gradients that backward() at line %d computed, before %s.step() at "
                    "line %d uses them, so the step changes nothing; call zero_grad() before the backward (or the "
                    "forward) instead." % (_code(zero[0], zero[1]), zero[1], last_bw[1], oname, line),
                    [(last_bw[0], last_bw[1], "backward() computed the gradients here"),
                     (path, line, "%s.step() finds no gradients here" % oname)])
            elif (prev["bw"] if prev is not None else 0) == self.n_backward:
                # No backward at all since the last step (or the start). When a backward did run but did not
                # reach these parameters, a cut is the cause, and GS904 names it.
                rel = [(last_bw[0], last_bw[1], "the last backward() ran here, before the previous step")] if last_bw else []
                self.finding(
                    "GS908", path, line, "warning",
                    "%s.step() at line %d runs while none of its parameters has a gradient (no backward() since "
                    "the last step reached them), so it changes nothing; call backward() before step()."
                    % (oname, line), rel)
        elif prev is not None and self.n_backward > prev["bw"]:
            # The same gradient tensors, alive and never zeroed, since the previous step: they accumulated.
            same = [p for p, ref in prev["grads"] if p.grad is not None and ref() is p.grad
                    and id(p.grad) not in self.grad_resets]
            if same and len(same) == len(prev["grads"]) and last_bw is not None:
                self.finding(
                    "GS909", last_bw[0], last_bw[1], "warning",
                    "backward() at line %d adds into gradients that were never reset since %s.step() at line %d "
                    "(no zero_grad()), so step() at line %d uses the sum of this and every earlier step's "
                    "gradients; call %s.zero_grad() before the backward (if you accumulate over micro-batches on "
                    "purpose, zero after each step)." % (last_bw[1], oname, prev["line"], line, oname),
                    [(path, line, "%s.step() uses the accumulated gradients here" % oname),
                     (prev["path"], prev["line"], "the previous step, after which nothing reset the gradients")])
        self.ever_grad.update(map(id, with_grad))
        w = self.opt_watch.get(id(optimizer))
        if w is None and len(self.opt_watch) < 16:
            w = self.opt_watch[id(optimizer)] = {"ref": weakref.ref(optimizer), "path": path, "line": line,
                                                 "steps": 0, "label": oname, "names": self._param_names(frame)}
        if w is not None:
            w["steps"] += 1
            if w["steps"] <= 2:
                self.check_unregistered(path, line, oname)
        sample = [(p, weakref.ref(p.grad)) for p in with_grad[:4]]
        for p, _ in sample:
            self.grad_resets.discard(id(p.grad))
            self.watched_grads.add(id(p.grad))
        self.step_state[id(optimizer)] = {"bw": self.n_backward, "grads": sample, "path": path, "line": line}

    def check_unregistered(self, path, line, oname):
        """GS911: a module kept in a plain dict, list or tuple attribute of a module an optimizer trains. It is
        not registered, so `parameters()` of its owner leaves it out: its parameters get gradients (it is used
        in the loss) but no optimizer steps them. Reported once per module, at the statement that built it."""
        Module = self.torch.nn.Module
        stepped = set()
        for _shape, ref, params in self._opt_params.values():
            if ref() is not None:
                stepped.update(map(id, params))
        if not stepped:
            return
        for owner in list(self.module_sites.keys())[:5000]:
            attrs = getattr(owner, "__dict__", {})
            if not any(id(p) in stepped for p in owner.parameters()):
                continue
            for attr, holder in list(attrs.items()):
                if attr.startswith("_") or not isinstance(holder, (dict, list, tuple)):
                    continue
                items = list(holder.items()) if isinstance(holder, dict) else list(enumerate(holder))
                for key, m in items[:64]:
                    if not isinstance(m, Module) or m in owner._modules.values():
                        continue
                    params = [p for p in m.parameters() if p.requires_grad]
                    if not params or any(id(p) in stepped for p in params) or all(p.grad is None for p in params):
                        continue
                    built = self.module_sites.get(m)
                    if built is None:
                        continue
                    kind = type(holder).__name__
                    registered = "nn.ModuleDict" if isinstance(holder, dict) else "nn.ModuleList"
                    self.finding(
                        "GS911", built[0], built[1], "warning",
                        "`%s.%s[%r]` (%s) is kept in a plain %s, so it is not a registered submodule: "
                        "`parameters()` leaves it out and %s at line %d never updates it, although it gets "
                        "gradients; keep it in %s." % (type(owner).__name__, attr, key, type(m).__name__, kind,
                                                      oname + ".step()", line, registered),
                        [(path, line, "%s.step() updates the other parameters here, not these" % oname)])

    # ------------------------------------------------------------------ GS913: a constant loss term
    def note_item_term(self, out, args, path, line, frame):
        """`loss = fit + 0.5 * sparsity` where `sparsity` is a number `.item()` took out of a tensor that requires
        grad: the term changes the loss's value but not its gradient. Found by the number's name in this
        statement's text and its identity in the running frame; the sum's graph node remembers it, and the
        backward of that sum reports it (`check_item_terms`)."""
        if not any(type(a) in (float, int) for a in args) or self.item_terms >= 64:
            return
        text = _source(path, line) or ""
        known = {id(n): (p, ln) for n, p, ln in self.item_numbers}
        for name, value in list(frame.f_locals.items()):
            if type(value) in (float, int) and id(value) in known and name.isidentifier() and re.search(
                    r"\b%s\b" % re.escape(name), text):
                ipath, iline = known[id(value)]
                gf = out.grad_fn
                if gf is not None:
                    gf.metadata["gs_term"] = (ipath, iline, name, path, line)
                    self.item_terms += 1
                return

    def check_item_terms(self, roots, path, line):
        """At a backward: a root that is, or adds up, a term marked by `note_item_term` (through additions and
        subtractions only, so the term really is additive) gets GS913 at the `.item()` line."""
        for r in roots:
            stack, n = [(r.grad_fn, 0)], 0
            while stack and n < 64:
                node, depth = stack.pop()
                n += 1
                if node is None:
                    continue
                term = node.metadata.get("gs_term")
                if term is not None:
                    ipath, iline, name, apath, aline = term
                    self.finding(
                        "GS913", ipath, iline, "warning",
                        "`%s` is a Python number taken out of a tensor that requires grad (line %d), so adding it "
                        "to the loss at line %d changes the loss's value but gives no gradient; keep the tensor "
                        "(drop `.item()`)." % (name, iline, aline),
                        [(apath, aline, "the term is added to the loss here"),
                         (path, line, "this backward gets no gradient from it")])
                    continue
                if depth < 6 and node.name() in ("AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1"):
                    stack.extend((nxt, depth + 1) for nxt, _ in node.next_functions if nxt is not None)

    # ------------------------------------------------------------------ GS912: graphs kept in containers
    def note_kept(self, t, path, line):
        """Count the executions of user line `path:line` that make tensors with a graph; when one begins while
        the results of at least 2 earlier ones are alive, something keeps them: look at what (`inspect_kept`),
        until found for the line."""
        key = (path, line)
        rec = self.kept_sites.get(key)
        if rec is None:
            if len(self.kept_sites) >= 20000:
                return
            rec = self.kept_sites[key] = [0, collections.deque(maxlen=16), False, 0, 0]
        new_run = self._kept_last != key
        if new_run:
            rec[3] += 1  # another line made a tensor since: this is a new execution of `key`
            self._kept_last = key
        rec[0] += 1
        try:
            entry = weakref.ref(t)
        except TypeError:
            return
        if new_run or not rec[1]:
            rec[1].append(entry)
        else:
            rec[1][-1] = entry  # one per execution: its last tensor, the statement's result
        if not new_run or rec[2] or len(self.kept_cands) >= 16 or self.kept_looks >= 24:
            return
        alive = [x for x in (w() for w in rec[1]) if x is not None]
        # A pile-up is the results of several executions of the line alive at once (one entry per execution: its
        # last tensor, the statement's result); looked at when 3, 4, 8 or 16 are alive for the first time. The
        # many tensors one `out = model(x)` makes inside a library's forward are one execution, alive until the
        # backward frees them: looking at the heap for those (each look a `gc.get_referrers` scan, 40-120 ms
        # with torch imported) cost a traced transformer step 50 ms and found nothing.
        n = len(alive)
        if n < 3 or n <= rec[4] or (n > 3 and n & (n - 1)):
            return
        rec[4] = n
        self.kept_looks += 1  # each look scans the heap (gc.get_referrers): a few per run at most
        self.busy += 1
        try:
            with self.torch._C.DisableTorchFunction():
                # Looked at again at the next power of two if nothing was found (the alive ones may have been a
                # library's intermediates, such as a distribution's normalised logits).
                rec[2] = self.inspect_kept(key, alive)
        except Exception as exc:  # noqa: BLE001 - a look at the heap must never break the script
            self.internal(exc)
        finally:
            self.busy -= 1

    def inspect_kept(self, site, alive):
        """Several tensors with a graph from one line are alive at once: find the dict entry or list that holds
        an older one, and the statement that stores into it (by the dict key or the list's name). Returns
        whether it found one."""
        import gc

        older = alive[:-1]  # the newest may still be in a local variable
        mine = {id(alive), id(older)}
        for t in list(reversed(older))[:3]:
            for holder in gc.get_referrers(t):
                if id(holder) in mine or type(holder) not in (dict, list):
                    continue
                found = self._store_of(holder, t, site, mine)
                if found is None:
                    continue
                store, how = found
                cid = len(self.kept_cands)
                for x in older:
                    gf = x.grad_fn
                    if gf is not None:
                        gf.metadata["gs_cand"] = cid
                self.kept_cands.append({"store": store, "site": site, "how": how, "count": len(alive),
                                        "backwarded": False, "bw_at": self.n_backward})
                return True
        return False

    def _store_of(self, holder, t, site, mine):
        """(store statement (path, line), description) for a dict entry or list holding `t`, or None."""
        import gc

        if type(holder) is dict:
            if "__name__" in holder and "__builtins__" in holder:
                return None  # a module's globals: one name holds one value, nothing piles up
            key = next((k for k, v in holder.items() if v is t), None)
            if not isinstance(key, str):
                return None
            for r in gc.get_referrers(holder):
                if getattr(r, "__dict__", None) is holder:
                    return None  # an object's attribute (`self.last = loss`): one value, replaced
            line = self._find_store(site[0], lambda n: _stores_key(n, key))
            return (line, "the dict entry %r" % key) if line else None
        # A list: its name where the running code holds it (a local, a global, or an attribute of an object a
        # local names, `self.history`), found on the current stack; the inspection runs while the line that
        # makes these tensors runs, so the code that collects them is usually on it.
        names = set()
        f = sys._getframe(1)
        depth = 0
        while f is not None and depth < 200:  # torch.distributions and friends add many frames
            depth += 1
            if self._is_user(f.f_code.co_filename):
                scopes = [f.f_locals] if f.f_locals is f.f_globals else [f.f_locals, f.f_globals]
                for scope in scopes:
                    for k, v in list(scope.items()):
                        if v is holder:
                            names.add(k)
                        elif scope is f.f_locals and type(getattr(v, "__dict__", None)) is dict:
                            names.update(a for a, w in v.__dict__.items() if w is holder)
            f = f.f_back
        for name in sorted(names):
            line = self._find_store(site[0], lambda n, name=name: _appends_to(n, name))
            if line:
                return line, "the list `%s`" % name
        return None

    def _find_store(self, near, match):
        """The first statement matching `match` in the user file `near`, else in the script: (path, line)."""
        import ast

        for path in dict.fromkeys((near, self.script)):
            tree = self._parsed.get(path, False)
            if tree is False:
                try:
                    with open(path, encoding="utf-8") as fh:
                        tree = ast.parse(fh.read())
                except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                    tree = None
                self._parsed[path] = tree
            if tree is None:
                continue
            lines = sorted(n.lineno for n in ast.walk(tree) if match(n))
            if lines:
                return path, lines[0]
        return None

    def mark_kept(self, roots):
        """A backward through a candidate's tensors resolves it: they were kept to be backwarded together."""
        open_ = {i for i, c in enumerate(self.kept_cands) if not c["backwarded"]}
        if not open_:
            return
        seen, stack, n = set(), [r.grad_fn for r in roots if r.grad_fn is not None], 0
        while stack and n < 50000 and open_:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            n += 1
            try:
                cid = node.metadata.get("gs_cand")
            except Exception:  # noqa: BLE001 - some nodes have no metadata
                cid = None
            if cid in open_:
                self.kept_cands[cid]["backwarded"] = True
                open_.discard(cid)
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)

    def report_kept(self):
        for c in self.kept_cands:
            # Kept for a backward that never came is only a finding when a later backward ran without them: a
            # run stopped (step limit, an error) in the middle of collecting (a REINFORCE episode's log-probs)
            # has not shown that they are never used.
            if c["backwarded"] or self.n_backward <= c["bw_at"]:
                continue
            (path, line), (spath, sline) = c["store"], c["site"]
            related = [] if (spath, sline) == (path, line) else [
                (spath, sline, "the tensors and their graphs are made here")]
            self.finding(
                "GS912", path, line, "warning",
                "%s at line %d keeps tensors that carry their autograd graph in %s: %d were alive at once and no "
                "backward used them, so every stored graph stays in memory; store `.detach()` or `.item()`, or run "
                "the code under torch.no_grad()." % (_code(path, line), line, c["how"], c["count"]), related)

    def on_warning(self, message, path, line):
        """GS910: torch's warning that `clip_grad_norm_`/`clip_grad_value_` got an empty generator of
        parameters, on the user's line: the generator from `model.parameters()` was already used up (by the
        optimizer built from it), so nothing is clipped."""
        if "empty generator" not in str(message) or not self._is_user(path):
            return
        self.finding(
            "GS910", path, line, "warning",
            "%s at line %d gets an empty generator of parameters (one the optimizer already used up, most "
            "likely), so it clips nothing; build a list once with `list(model.parameters())` and pass that to "
            "both." % (_code(path, line), line))

    def check_manual_update(self, leaf, path, line):
        """A hand-written update (`w -= lr * w.grad` under no_grad): GS909 when the same gradient tensor,
        never reset, was already used by the previous update of this leaf and a backward added to it since."""
        key = id(leaf)
        g = leaf.grad
        prev = self.manual_state.get(key)
        if (prev is not None and prev[0]() is g and self.n_backward > prev[1] and id(g) not in self.grad_resets
                and self.backwards and prev[2] == path and prev[3] == line):
            bpath, bline, _ = self.backwards[-1]
            self.finding(
                "GS909", bpath, bline, "warning",
                "backward() at line %d adds into a gradient that was never reset since the update at line %d used "
                "it, so each update uses the sum of all gradients so far; reset it after the update (`%s.grad = "
                "None` or `.grad.zero_()`, inside the no_grad block)." % (bline, line, self._leaf_label(leaf)),
                [(path, line, "the update uses the accumulated gradient here")])
        self.manual_state[key] = (weakref.ref(g), self.n_backward, path, line)
        self.watched_grads.add(id(g))
        self.grad_resets.discard(id(g))
        if len(self.manual_state) > 4096:
            self.manual_state.clear()

    def _leaf_label(self, leaf):
        try:
            f = self.site(3)
            return self.name_in_frame(f, leaf) or "w"
        except Exception:
            return "w"

    def _param_names(self, frame):
        """id(parameter) -> "model.fc3.weight" for the modules visible from the user frames (once per optimizer)."""
        nn = self.torch.nn
        names = {}
        f = frame
        try:
            while f is not None and len(names) < 100000:
                for space in (f.f_locals, f.f_globals):
                    for k, v in list(space.items()):
                        if isinstance(v, nn.Module) and not k.startswith("__"):
                            for pn, p in v.named_parameters():
                                names.setdefault(id(p), "%s.%s" % (k, pn))
                f = f.f_back
        except Exception:
            pass
        return names

    def unused_modules(self):
        """GS904 without a cut: parameters an optimizer holds that no backward reached in the whole run, one
        finding per module. Information only: a branch not taken in a short trace looks the same."""
        for w in self.opt_watch.values():
            opt = w["ref"]()
            if opt is None or w["steps"] < 2:
                continue
            params = [p for g in getattr(opt, "param_groups", ()) for p in g.get("params", ())
                      if isinstance(p, self.Tensor) and p.requires_grad]
            missing = [p for p in params if id(p) not in self.ever_grad and p.grad is None
                       and id(p) not in self.candidates]
            if not missing or len(missing) == len(params):
                continue  # all missing: GS903/GS904/GS908 explain it
            groups = collections.OrderedDict()
            for p in missing:
                name = w["names"].get(id(p))
                module, _, leaf = name.rpartition(".") if name else ("", "", "")
                groups.setdefault(module or "(unnamed parameters)", []).append(leaf or "?")
            for module, leaves in list(groups.items())[:8]:
                self.finding(
                    "GS904", w["path"], w["line"], "information",
                    "`%s` (%s) is updated by %s.step() at line %d but never received a gradient in %d steps: "
                    "no loss that was backpropagated depends on it (a layer not called in forward, or a branch "
                    "not taken); if that is intended, freeze it or leave it out of the optimizer."
                    % (module, ", ".join(leaves[:6]), w["label"], w["line"], w["steps"]))

    def on_zero_grad(self, frame):
        if frame is not None:
            self.last_zero_grad = (frame.f_code.co_filename, frame.f_lineno, self.n_backward)

    def on_step_post(self, optimizer, args, kwargs):
        self.step_line, self.step_frame = -1, None
        if self.busy:
            return
        self.opt_steps += 1
        try:
            self.step_log.append((self.n_backward, weakref.ref(optimizer)))
            if len(self.step_log) > 64:
                del self.step_log[:32]
        except TypeError:
            pass
        self.busy += 1
        try:
            frame = self.site(2)
            if frame is not None:
                self.event(frame.f_code.co_filename, frame.f_lineno, "step", type(optimizer).__name__)
        finally:
            self.busy -= 1
        self.count_step()

    # ----------------------------------------------------------------------------- finalize
    def finalize(self, exc):
        try:
            self.unused_modules()
        except Exception as e:
            self.internal(e)
        try:
            self.report_kept()
        except Exception as e:
            self.internal(e)
        # GS905: graphs that keep growing across backward calls, unless a GS902 already explains the line.
        gs902_lines = set()
        for f in self.findings:
            if f["code"] == "GS902":
                gs902_lines.add((f["path"], f["line"]))
                gs902_lines.update((r["path"], r["line"]) for r in f["related"])
        for key, info in self.gs905.items():
            if key in gs902_lines:
                continue
            path, line = key
            related = []
            if info["backward"]:
                related.append((info["backward"][0], info["backward"][1],
                                "backward ran here, yet the graph built before it is kept alive and extended"))
            self.finding(
                "GS905", path, line, "warning",
                "%s at line %d combines a tensor that still carries the autograd graph of an earlier step with "
                "this step's, so every step's graph stays in memory; accumulate `loss.item()` or "
                "`loss.detach()` instead." % (_code(path, line), line), related)
        # GS904: leaves that a cut kept from ever getting a gradient.
        opt_ids = set()
        for _shape, _ref, params in self._opt_params.values():
            # The cache holds the parameters themselves, so their ids are still theirs after the script ended.
            opt_ids.update(map(id, params))
        opt_ids.update(self.manual_state)  # leaves updated by hand (`w -= lr * w.grad`) learn too
        n_bw = len(self.backwards)
        groups = collections.OrderedDict()
        for c in self.candidates.values():
            leaf = c["ref"]()
            if leaf is not None and leaf.grad is not None:
                continue
            if self.stopped is not None and c["bw_index"] >= n_bw - 1:
                continue  # the stopped script might still have given it a gradient
            ev = c["event"]
            # A value taken out with .item()/.tolist() and rebuilt into a new leaf: the rebuild is the statement
            # to change (it is what makes a fresh leaf that backward then reaches instead of the model).
            # An explicit .detach()/.data before the rebuild stays the statement to change.
            at = c["rewrap"] if c["rewrap"] and ev["op"] in _EXIT_NAMES else ev
            groups.setdefault((at["path"], at["line"]), []).append(c)
        for (path, line), cs in groups.items():
            ev = cs[0]["event"]
            names = [c["name"] for c in cs if c["name"]]
            who = ", ".join(names[:4]) + (" and %d more" % (len(cs) - 4) if len(cs) > 4 else "") if names else (
                "%d tensor%s that require grad" % (len(cs), "s" if len(cs) > 1 else ""))
            bpath, bline, bop = cs[0]["backward"]
            related = [(bpath, bline, "%s() here gives %s no gradient" % (bop, who))]
            rebuilt = bool(cs[0]["rewrap"]) and ev["op"] in _EXIT_NAMES and (ev["path"], ev["line"]) != (path, line)
            if rebuilt:
                related.append((ev["path"], ev["line"], "the value leaves autograd here (.%s())" % ev["op"]))
            elif cs[0]["rewrap"]:
                rw = cs[0]["rewrap"]
                related.append((rw["path"], rw["line"], "a new tensor without history is built here"))
            plural = len(cs) > 1
            # Computing features under no_grad is usually deliberate (a frozen backbone): say so quietly. So is
            # a cut before parameters no optimizer steps (features from a fixed backbone, an attack's model):
            # only parameters an optimizer updates are expected to learn.
            leaves = [c["ref"]() for c in cs]
            stepped = any(leaf is not None and id(leaf) in opt_ids for leaf in leaves)
            severity = "information" if ev["kind"] == "nograd" or not stepped else "warning"
            if rebuilt:
                what = ("%s at line %d builds a new tensor from the plain value that line %d took out with .%s(), "
                        "which cuts %s out of the graph that %s() at line %d backpropagates; use the tensor itself "
                        "(no .%s() and no rebuild)" % (_code(path, line), line, ev["line"], ev["op"],
                                                      "them" if plural else "it", bop, bline, ev["op"]))
            else:
                what = ("%s at line %d cuts %s out of the graph that %s() at line %d backpropagates; if that is "
                        "intended, freeze %s with requires_grad_(False)" % (
                            _code(path, line), line, "them" if plural else "it", bop, bline,
                            "them" if plural else "it"))
            self.finding(
                "GS904", path, line, severity,
                "%s require%s grad but never get%s a gradient: %s." % (who, "" if plural else "s",
                                                                     "" if plural else "s", what),
                related)
        # GS900: an exception no finding explains.
        if exc is not None and self.stopped != "memory" and not any(exc is e for e in self.explained):
            p, ln = self.exc_user_site(exc)
            if p:
                related = list(getattr(self, "_backward_related", []) or [])
                self.enrich_error(exc, related)
                self.finding("GS900", p, ln, "error", "%s: %s" % (type(exc).__name__, _short(str(exc), 300)), related)

    def enrich_error(self, exc, related):
        # The user frames the exception passed through, outermost last: where the failing call came from.
        frames = []
        tb = exc.__traceback__
        while tb is not None:
            co = tb.tb_frame.f_code
            if self._user_code.get(co, False) or self._is_user(co.co_filename):
                frames.append((co.co_filename, tb.tb_lineno))
            tb = tb.tb_next
        for p, ln in reversed(frames[:-1][-3:]):
            related.append((p, ln, "called from here"))
        msg = str(exc)
        if "non-leaf Tensor" in msg:
            tb = exc.__traceback__
            while tb is not None:
                for v in list(tb.tb_frame.f_locals.values()):
                    if isinstance(v, self.Tensor) and not v.is_leaf and v.grad_fn is not None:
                        s = v.grad_fn.metadata.get("gs")
                        if s:
                            related.append((s[0], s[1], "this tensor stopped being a leaf here (%s); create it "
                                                        "on the right device/dtype instead" % s[2]))
                            return
                tb = tb.tb_next

    def exc_user_site(self, exc):
        best = (None, 0)
        tb = exc.__traceback__
        while tb is not None:
            co = tb.tb_frame.f_code
            u = self._user_code.get(co)
            if u is None:
                u = self._user_code[co] = self._is_user(co.co_filename)
            if u:
                best = (co.co_filename, tb.tb_lineno)
            tb = tb.tb_next
        return best

    def exc_script_line(self, exc):
        line = None
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.script:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None:
            line = self.exc_user_site(exc)[1] or None
        return line

    def result(self):
        events = sorted(self.events.values(), key=lambda e: (e["line"], e["kind"], e["op"]))
        # The order of `gradsight check`: path, line, column, code.
        findings = sorted(self.findings, key=lambda f: (f["path"], f["line"], f["column"], f["code"]))
        return {"findings": findings, "error": self.error, "events": events, "device": self.device,
                "steps": self.steps(), "stopped": self.stopped, "internal_errors": self.internal_errors,
                "traceback": self.traceback}


class _DeviceMeta(type):
    real = None

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.real)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.real)


def _install_cpu_mapping(torch, real):
    """Map CUDA requests to the CPU: torch.device("cuda"), is_available() and friends."""

    class device(metaclass=_DeviceMeta):  # noqa: N801 - mirrors torch.device
        def __new__(cls, *args, **kwargs):
            if args and isinstance(args[0], str) and args[0].startswith("cuda"):
                return real("cpu")
            if args and isinstance(args[0], real) and args[0].type == "cuda":
                return real("cpu")
            if kwargs.get("type", "").startswith("cuda") if isinstance(kwargs.get("type"), str) else False:
                return real("cpu")
            return real(*args, **kwargs)

    _DeviceMeta.real = real
    torch.device = device
    cuda = torch.cuda
    cuda.is_available = lambda: False
    cuda.device_count = lambda: 0
    for name in ("synchronize", "empty_cache", "set_device", "manual_seed", "manual_seed_all", "reset_peak_memory_stats"):
        if hasattr(cuda, name):
            setattr(cuda, name, lambda *a, **k: None)
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        if hasattr(cuda, name):
            setattr(cuda, name, lambda *a, **k: 0)
    if hasattr(torch, "set_default_device"):
        orig = torch.set_default_device

        def set_default_device(dev):
            if (isinstance(dev, str) and dev.startswith("cuda")) or (isinstance(dev, real) and dev.type == "cuda"):
                dev = "cpu"
            return orig(dev)

        torch.set_default_device = set_default_device


def _user_traceback(exc, limit=MAX_TEXT * 4):
    """The traceback Python would print for the script, without the frames of the runner, runpy and
    importlib that sit below the script's own (the user never wrote those)."""
    try:
        frames = traceback.extract_tb(exc.__traceback__)
        me = os.path.abspath(__file__)
        skip = ("runpy.py", "<frozen runpy>", "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")
        i = 0
        while i < len(frames) and (os.path.abspath(frames[i].filename) == me or frames[i].filename.endswith(skip)
                                   or frames[i].filename.startswith("<frozen")):
            i += 1
        # The runner's own frames (the function mode, the backward wrapper) sit between torch's; drop them.
        kept = traceback.StackSummary.from_list([fs for fs in frames[i:] if os.path.abspath(fs.filename) != me])
        lines = ["Traceback (most recent call last):\n"]
        lines += kept.format()
        lines += traceback.format_exception_only(type(exc), exc)
        text = "".join(lines)
        return text if len(text) <= limit else "...\n" + text[-limit:]
    except Exception:
        return None


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, ensure_ascii=True, default=str)
    os.replace(tmp, path)


def _error_result(device, etype, message, line=None, stopped=None):
    return {"findings": [], "error": {"type": etype, "message": message, "line": line}, "events": [],
            "device": device, "steps": 0, "stopped": stopped, "internal_errors": []}


def _set_memory_limit(mb):
    if not mb or mb <= 0:
        return
    try:
        import resource
    except ImportError:
        return
    # RLIMIT_AS would count the huge address-space reservations of CUDA and the allocator; RLIMIT_DATA
    # counts private writable memory, which is what a runaway script grows. The parent also polls RSS.
    limit = int(mb) * 1024 * 1024
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (ValueError, OSError, AttributeError):
        pass


def _is_memory_error(exc):
    if isinstance(exc, MemoryError):
        return True
    msg = str(exc)
    return isinstance(exc, RuntimeError) and ("can't allocate memory" in msg or "out of memory" in msg.lower()
                                               and "CUDA" not in msg)


class _Run:
    """One script's trace inside this process: its tracer, result file and whether it was written."""

    def __init__(self, tracer, result_path, device):
        self.tracer = tracer
        self.result_path = result_path
        self.device = device
        self.written = False

    def finish(self, exc=None, stopped=None, line=None):
        if self.written:
            return
        self.written = True
        tracer = self.tracer
        try:
            if stopped is not None:
                tracer.stopped = stopped
            if exc is not None:
                tracer.error = {"type": type(exc).__name__, "message": _short(str(exc), MAX_TEXT),
                                "line": line if line is not None else tracer.exc_script_line(exc)}
                tracer.traceback = _user_traceback(exc)
            tracer.busy += 1
            try:
                tracer.finalize(exc)
            except Exception as e2:
                tracer.internal(e2)
            _write_json(self.result_path, tracer.result())
        except BaseException as e3:  # noqa: BLE001 - the parent must get *something*
            try:
                _write_json(self.result_path, _error_result(self.device, TRACE_ERROR, "gradsight trace failed: %r" % (e3,)))
            except BaseException:
                pass


class Instrumentation:
    """Installs a tracer's function mode, saved-tensor hooks, backward/optimizer/from_numpy wrappers.

    A context manager; also used in-process by bench/trace_overhead.py. On exit everything it patched is
    restored, in reverse order.
    """

    def __init__(self, tracer):
        self.tracer = tracer
        self._undo = []

    def __enter__(self):
        tracer = self.tracer
        torch = tracer.torch
        from torch.overrides import TorchFunctionMode

        class _Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return tracer.on_op(func, args, kwargs if kwargs is not None else {})

        def patch(obj, name, value):
            old = getattr(obj, name)
            setattr(obj, name, value)
            self._undo.append(lambda: setattr(obj, name, old))

        patch(torch, "from_numpy", tracer.wrap_from_numpy(torch.from_numpy))
        patch(torch.autograd, "backward", tracer.wrap_backward(torch.autograd.backward, False))
        patch(torch.autograd, "grad", tracer.wrap_backward(torch.autograd.grad, True))

        def wrap_zero_grad(orig):
            def zero_grad(*args, **kwargs):
                if not tracer.busy:
                    try:
                        tracer.on_zero_grad(tracer.site(2))
                    except Exception as exc:
                        tracer.internal(exc)
                return orig(*args, **kwargs)

            zero_grad.__wrapped__ = orig
            zero_grad.__doc__ = orig.__doc__
            return zero_grad

        real_init = torch.nn.Module.__init__

        def module_init(module, *args, **kwargs):
            real_init(module, *args, **kwargs)
            if not tracer.busy and len(tracer.module_sites) < 100000:
                try:
                    f = tracer.site(2)
                    if f is not None:
                        tracer.module_sites[module] = (f.f_code.co_filename, f.f_lineno)
                except Exception as exc:  # noqa: BLE001 - never break model construction
                    tracer.internal(exc)

        module_init.__wrapped__ = real_init
        # Where each module was built (GS901 names an `inplace=True` module's construction).
        patch(torch.nn.Module, "__init__", module_init)

        real_showwarning = warnings.showwarning

        def showwarning(message, category, filename, lineno, file=None, line=None):
            # Warnings still print exactly as they would (torch names the user's line with its stacklevel);
            # GS910 only reads the one `clip_grad_norm_`/`clip_grad_value_` gives for a used-up generator.
            if not tracer.busy:
                try:
                    tracer.on_warning(message, filename, lineno)
                except Exception as exc:  # noqa: BLE001 - never break the script's warning
                    tracer.internal(exc)
            return real_showwarning(message, category, filename, lineno, file, line)

        patch(warnings, "showwarning", showwarning)
        # Where gradients were last cleared (GS908 names a zero_grad() between backward and step).
        patch(torch.optim.Optimizer, "zero_grad", wrap_zero_grad(torch.optim.Optimizer.zero_grad))
        patch(torch.nn.Module, "zero_grad", wrap_zero_grad(torch.nn.Module.zero_grad))
        try:
            from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

            for h in (register_optimizer_step_pre_hook(tracer.on_step_pre),
                      register_optimizer_step_post_hook(tracer.on_step_post)):
                self._undo.append(h.remove)
        except Exception:
            pass
        graph = torch.autograd.graph
        real_disable = graph.disable_saved_tensors_hooks
        C = torch._C._autograd

        @contextlib.contextmanager
        def disable_saved_tensors_hooks(error_message):
            # torch.func.grad/vjp/jacrev/hessian refuse to run while any saved-tensor hooks are active; the
            # script's own run would not have ours, so step them aside for the call (its saved tensors go
            # untracked) instead of turning a working script into an error.
            ours = False
            try:
                top = C._top_saved_tensors_default_hooks(False)
                ours = top is not None and top[0] == tracer.pack
            except Exception:
                ours = False
            if ours:
                C._pop_saved_tensors_default_hooks()
            try:
                with real_disable(error_message):
                    yield
            finally:
                if ours:
                    C._push_saved_tensors_default_hooks(tracer.pack, tracer.unpack)

        patch(graph, "disable_saved_tensors_hooks", disable_saved_tensors_hooks)
        hooks = torch.autograd.graph.saved_tensors_hooks(tracer.pack, tracer.unpack)
        hooks.__enter__()
        self._undo.append(lambda: hooks.__exit__(None, None, None))
        mode = _Mode()
        mode.__enter__()
        self._undo.append(lambda: mode.__exit__(None, None, None))
        return tracer

    def __exit__(self, *exc):
        while self._undo:
            try:
                self._undo.pop()()
            except Exception as e:  # noqa: BLE001 - restore the rest regardless
                self.tracer.internal(e)
        return False


def _trace_one(torch, script, result_path, opts, device, state):
    tracer = Tracer(torch, script, device, opts.max_steps, device == "cpu")
    tracer._real_device = state["real_device"]
    run = _Run(tracer, result_path, device)
    state["run"] = run

    # The script runs as `python script.py` would: its folder first on sys.path.
    saved_path = list(sys.path)
    saved_cwd = os.getcwd()
    sys.path.insert(0, os.path.dirname(script))
    sys.argv = [script]
    exc_out = None
    stopped = None
    try:
        with Instrumentation(tracer):
            if opts.function:
                _load_function(script, opts.function)()
            else:
                runpy.run_path(script, run_name="__main__")
    except _Stop as s:
        stopped = s.reason
    except SystemExit as e:
        if e.code not in (None, 0):
            exc_out = e
    except _MissingFunction as e:
        run.written = True
        _write_json(result_path, _error_result(device, TRACE_ERROR, str(e)))
    except BaseException as e:  # noqa: BLE001 - the script's exception is the trace's result
        if _is_memory_error(e):
            stopped = "memory"
        exc_out = e
    if stopped == "terminated":
        stopped = "timeout"  # the parent replaces this with its own reason
    tracer.stopping = tracer.stopping or "finished"  # a late SIGTERM must not interrupt the write
    run.finish(exc_out, stopped)
    state["run"] = None
    # Leave the process as the next script (batch mode) expects it.
    sys.path[:] = saved_path
    try:
        os.chdir(saved_cwd)
    except OSError:
        pass
    try:
        torch.set_grad_enabled(True)
        torch.autograd.set_detect_anomaly(False)
    except Exception:
        pass
    return stopped


def main(argv=None):
    ap = argparse.ArgumentParser(prog="gradsight-trace-runner")
    dest = ap.add_mutually_exclusive_group(required=True)
    dest.add_argument("--result", help="write the result of the one script here")
    dest.add_argument("--results-dir", help="batch mode: write the result of the i-th script to DIR/i.json")
    ap.add_argument("--function", default=None)
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--max-steps", type=int, default=20)
    ap.add_argument("--memory-mb", type=int, default=0)
    ap.add_argument("scripts", nargs="+")
    opts = ap.parse_args(argv)

    scripts = [os.path.abspath(s) for s in opts.scripts]
    if opts.result:
        if len(scripts) != 1:
            ap.error("--result takes exactly one script; use --results-dir for several")
        outputs = [opts.result]
    else:
        outputs = [os.path.join(opts.results_dir, "%d.json" % i) for i in range(len(scripts))]
    main_pid = os.getpid()
    real_exit = os._exit

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    _watch_parent(here)

    def no_input(*_args, **_kwargs):
        raise EOFError(INPUT_MESSAGE)

    builtins.input = no_input

    def fail_all(message):
        for out in outputs:
            _write_json(out, _error_result("none", TRACE_ERROR, message))
        return 2

    try:
        import torch
        from torch.overrides import TorchFunctionMode  # noqa: F401 - fail early on a torch without modes
    except BaseException as exc:  # noqa: BLE001 - any failure means: no usable torch here
        return fail_all("torch is not importable in %s (%s: %s); run the trace with an interpreter that has "
                        "torch (--python)" % (sys.executable, type(exc).__name__, exc))
    cuda_ok = False
    try:
        cuda_ok = bool(torch.cuda.is_available())
    except Exception:
        pass
    if opts.device == "cuda" and not cuda_ok:
        return fail_all("--device cuda was asked for, but torch.cuda.is_available() is False in %s"
                        % sys.executable)
    device = "cuda" if (opts.device == "cuda" or (opts.device == "auto" and cuda_ok)) else "cpu"
    if device == "cpu":
        # Not on CUDA runs: the driver's own mappings would count; there only the parent's RSS poll applies.
        _set_memory_limit(opts.memory_mb)
    state = {"run": None, "real_device": torch.device}
    if device == "cpu":
        _install_cpu_mapping(torch, state["real_device"])

    def patched_exit(code=0):
        # os._exit skips every finally block: write the result first (in the traced process only).
        run = state["run"]
        if os.getpid() == main_pid and run is not None and not run.written:
            run.tracer.stopping = run.tracer.stopping or "exited"
            exc = SystemExit("the script called os._exit(%s)" % (code,)) if code else None
            f = run.tracer.site(2)
            run.finish(exc, line=f.f_lineno if f is not None and f.f_code.co_filename == run.tracer.script else None)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        real_exit(code)

    os._exit = patched_exit

    def on_term(signum, _frame):
        if os.getpid() != main_pid:
            real_exit(128 + signum)
        run = state["run"]
        state["terminated"] = True
        if run is not None and run.tracer.stopping is None:
            run.tracer.stopping = "terminated"
            raise _Stop("terminated")

    try:
        signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError):
        pass

    for i, (script, out) in enumerate(zip(scripts, outputs)):
        if state.get("terminated"):
            break
        _trace_one(torch, script, out, opts, device, state)
        if len(scripts) > 1 and i + 1 < len(scripts):
            # Tell the parent where this script's output ends (it keeps each script's last lines apart).
            for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
                try:
                    stream.flush()
                except Exception:
                    pass
                try:
                    os.write(fd, SCRIPT_MARK)
                except OSError:
                    pass
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    # Do not wait for threads the script left running, nor run its atexit handlers.
    real_exit(0)


def _watch_parent(here, interval=0.5):
    """If the parent (`gradsight trace`, the language server) dies without stopping us (SIGKILL, a crash),
    remove our temporary folder and kill our whole process group: a trace must never be left running.
    A daemon thread polling getppid() works on every POSIX system (prctl(PR_SET_PDEATHSIG) is Linux-only
    and would not reach the script's own children)."""
    if os.name != "posix":
        return
    import shutil
    import threading
    import time

    parent = os.getppid()
    main_pid = os.getpid()
    real_exit = os._exit  # captured before main() patches os._exit to write a result first

    def watch():
        while True:
            time.sleep(interval)
            if os.getpid() != main_pid:
                return  # a forked copy of this thread's process: only the runner itself watches
            if os.getppid() != parent:
                if os.path.basename(here).startswith("gradsight-trace-"):
                    shutil.rmtree(here, ignore_errors=True)
                try:
                    os.killpg(os.getpgid(0), signal.SIGKILL)
                finally:
                    real_exit(137)

    threading.Thread(target=watch, name="gradsight-trace-parent-watch", daemon=True).start()


class _MissingFunction(Exception):
    pass


def _stores_key(node, key):
    """`x[key] = ...` / `x[key] += ...` or a dict display `{key: ...}` with the string constant `key`."""
    import ast

    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and t.slice.value == key
                   for t in targets)
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == key for k in node.keys)
    return False


def _appends_to(node, name):
    """`name.append(...)`, `self.name.append(...)` (also extend/insert)."""
    import ast

    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("append", "extend", "insert")):
        return False
    target = node.func.value
    return (isinstance(target, ast.Name) and target.id == name) or (
        isinstance(target, ast.Attribute) and target.attr == name)


def _load_function(script, name):
    stem = os.path.splitext(os.path.basename(script))[0]
    modname = "__gradsight_trace__"
    stdlib = getattr(sys, "stdlib_module_names", ())
    if stem.isidentifier() and stem not in sys.modules and stem not in stdlib and stem not in sys.builtin_module_names:
        modname = stem
    spec = importlib.util.spec_from_file_location(modname, script)
    if spec is None or spec.loader is None:
        raise _MissingFunction("cannot import %s" % script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        raise _MissingFunction("no function named %r in %s" % (name, script))
    if not callable(fn):
        raise _MissingFunction("%r in %s is not callable" % (name, script))
    return fn


if __name__ == "__main__":
    sys.exit(main())

