"""What a name bound from a library call is, by jedi's static inference (issue 13 part 3).

The interpreter knows torch's own API (`torchdb`), but `model = AutoModel.from_pretrained(...)` or
`opt = build_optimizer(cfg)` from an installed library is opaque to it. When it cannot resolve such a name it
asks `interp.libinfer.classify(text, path, line, column)` (set by the driver; `None` where jedi is missing);
the answer says whether the value is an `nn.Module` (its parameters carry gradients) or an optimizer.

jedi infers statically: it reads library sources and never imports or runs user or library Python code in
this process (its helper subprocess may load compiled extensions found on the environment's path, as jedi
documents). jedi is imported lazily on the first question, and each answer is cached per (file, version of
its imports, then per asked line's text) inside the instance, which the driver keeps per analysis owner, so a keystroke elsewhere re-asks
nothing. Costs: docs/performance.md ("Library inference").
"""

from __future__ import annotations

import ast
import hashlib
import pathlib
from dataclasses import dataclass
from typing import Optional

MODULE_BASE = "torch.nn.modules.module.Module"
OPTIMIZER_BASE = "torch.optim.optimizer.Optimizer"
# Class hierarchies deeper than this (through library bases) are not followed: the answer is "not known".
MAX_DEPTH = 12


@dataclass(frozen=True)
class LibClass:
    """The class of a library value: its qualified name and what gradsight cares about in it."""

    qualname: str
    is_module: bool
    is_optimizer: bool
    # An `nn.Module` subclass of `torch.nn.Module` itself whose code creates no parameter and no sub-module
    # (`_param_free`): its outputs have its inputs' grad state (ColBERT's `Maxsim`, a matmul and a max).
    param_free: bool = False


class LibraryInference:
    """jedi-backed answers to "what class is the value of this name?", cached per file version."""

    def __init__(self, root: Optional[str] = None, sys_path: Optional[list[str]] = None, max_cached_files: int = 64):
        self.root = root
        self.sys_path = list(sys_path or [])
        self.max_cached_files = max_cached_files
        self._jedi = None  # the module, imported on first use; False when unavailable
        self._project = None
        self._answers: dict[tuple[str, str], dict[tuple[str, int], Optional[LibClass]]] = {}
        self._bases: dict[tuple[str, int], tuple[bool, bool]] = {}
        self.asked = 0  # questions that reached jedi (the rest were cached), for benchmarks and tests

    def available(self) -> bool:
        if self._jedi is None:
            try:
                import jedi  # noqa: PLC0415 - lazy: most analyses never ask, and jedi takes ~0.3 s to import

                # Locked down: jedi's defaults import some modules for real (`gi`) and may load compiled
                # extensions; gradsight must never import or run library or user code in its own process.
                jedi.settings.auto_import_modules = []
                if hasattr(jedi.settings, "load_unsafe_extensions"):
                    jedi.settings.load_unsafe_extensions = False
                self._jedi = jedi
            except ImportError:
                self._jedi = False
        return bool(self._jedi)

    def _get_project(self):
        if self._project is None:
            root = self.root or str(pathlib.Path.cwd())
            self._project = self._jedi.Project(root, added_sys_path=self.sys_path)
        return self._project

    def classify(self, text: str, path: str, line: int, column: int) -> Optional[LibClass]:
        """The class of the value bound to the identifier at (line 1-based, column 0-based code points)."""
        if not self.available():
            return None
        lines = text.splitlines()
        if not 1 <= line <= len(lines):
            return None
        # What a library call returns depends on the file's imports and on the statement itself (names the file
        # defines are resolved by the engine and never asked), so answers are keyed by the text of the import
        # lines and of the asked line: typing anywhere else in the file re-asks nothing.
        imports = "\n".join(s for s in lines if s.lstrip().startswith(("import ", "from ")))
        key = (path, hashlib.blake2b(imports.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest())
        answers = self._answers.get(key)
        if answers is None:
            # One version of a file's imports is kept: a changed import forgets the old answers.
            for old in [k for k in self._answers if k[0] == path]:
                del self._answers[old]
            while len(self._answers) >= self.max_cached_files:
                del self._answers[next(iter(self._answers))]
            answers = self._answers[key] = {}
        asked = (lines[line - 1], column)
        if asked in answers:
            return answers[asked]
        self.asked += 1
        answer = self._ask(text, path, line, column)
        answers[asked] = answer
        return answer

    def _ask(self, text: str, path: str, line: int, column: int) -> Optional[LibClass]:
        try:
            script = self._jedi.Script(text, path=path if path and not path.startswith("<") else None,
                                       project=self._get_project())
            names = script.infer(line, column)
        except Exception:  # noqa: BLE001 - jedi failing on odd code means "not known", never an analysis error
            return None
        for name in names:
            if name.type != "instance" or not name.full_name:
                continue
            is_module, is_optimizer = self._kind(name.full_name, name.module_path, name.line, 0)
            free = is_module and self._bases.get((str(name.module_path), name.line, "free"), False)
            return LibClass(name.full_name, is_module, is_optimizer, free)
        return None

    def _kind(self, full_name: str, module_path, line: Optional[int], depth: int) -> tuple[bool, bool]:
        """(is nn.Module subclass, is Optimizer subclass) of the class defined at module_path:line."""
        if full_name == MODULE_BASE or full_name.startswith("torch.nn.modules."):
            return True, False
        if full_name == OPTIMIZER_BASE or full_name.startswith("torch.optim."):
            # Every class under torch.optim is an optimizer except the schedulers and SWA helpers.
            return False, not full_name.startswith(("torch.optim.lr_scheduler", "torch.optim.swa_utils"))
        if module_path is None or line is None or depth > MAX_DEPTH:
            return False, False
        key = (str(module_path), line)
        if key in self._bases:
            return self._bases[key]
        self._bases[key] = (False, False)  # a cycle through bases answers "no"
        result = (False, False)
        try:
            source = pathlib.Path(module_path).read_text(encoding="utf-8")
            cls = next((n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and n.lineno <= line
                        and n.end_lineno and line <= n.end_lineno and n.name == full_name.rsplit(".", 1)[-1]), None)
            if cls is not None:
                script = self._jedi.Script(source, path=str(module_path), project=self._get_project())
                direct = bool(cls.bases) and not cls.keywords  # every base is `torch.nn.Module` itself
                for base in cls.bases:
                    targets = [t for t in script.infer(base.end_lineno, base.end_col_offset)
                               if t.type == "class" and t.full_name]
                    direct = direct and len(targets) == 1 and targets[0].full_name == MODULE_BASE
                    for target in targets:
                        kind = self._kind(target.full_name, target.module_path, target.line, depth + 1)
                        result = (result[0] or kind[0], result[1] or kind[1])
                self._bases[(key[0], key[1], "free")] = direct and _param_free(cls)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
            pass
        except Exception:  # noqa: BLE001 - jedi internals on unusual code: "not known"
            pass
        self._bases[key] = result
        return result


# Calls whose result stored on `self` is plain data, never a parameter or a module.
_PLAIN_CALLS = frozenset({"int", "float", "bool", "str", "len", "max", "min", "abs", "round", "tuple"})
# `self.<name>(...)` calls of `nn.Module` that register nothing that requires grad.
_HARMLESS_SELF_CALLS = frozenset({"register_buffer", "train", "eval", "to", "cuda", "cpu", "float", "half",
                                  "double", "extra_repr", "__init__"})


def _param_free(cls: ast.ClassDef) -> bool:
    """Whether a module class's own code (every method, `__init__` included) surely creates no parameter and no
    sub-module, syntactically: nothing but plain data is stored on `self` (constants, builtins of them, and
    configuration read from an argument: `self.batch_size = args.bs`, `self.dim = dim` with `dim: int` or
    `dim=128`), no `nn.Parameter`, `setattr`, `add_module` or `register_parameter`, no call of a stored attribute
    (`self.encoder(x)` of a module handed in), no store into a stored attribute (`self.layers.append(...)`).
    Anything else answers False: the module is then taken to have parameters, as before."""
    methods = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if methods & {"__getattr__", "__setattr__", "__call__"}:
        return False
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = fn.args
        params = a.posonlyargs + a.args + a.kwonlyargs
        if not params:
            continue
        me = params[0].arg
        defaults = dict(zip([p.arg for p in (a.posonlyargs + a.args)[len(a.posonlyargs + a.args) - len(a.defaults):]],
                            a.defaults))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
        plain_names = {p.arg for p in params[1:]
                       if (isinstance(defaults.get(p.arg), ast.Constant) and defaults[p.arg].value is not None)
                       or (isinstance(p.annotation, ast.Name) and p.annotation.id in ("int", "float", "bool", "str"))}
        rooted = {p.arg for p in params[1:]}
        for n in ast.walk(fn):
            if isinstance(n, ast.Call):
                f = n.func
                last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
                if last in ("Parameter", "ParameterList", "ParameterDict", "setattr", "add_module",
                            "register_parameter", "register_module"):
                    return False
                if isinstance(f, ast.Attribute) and _is_self(f.value, me) and f.attr not in methods \
                        and f.attr not in _HARMLESS_SELF_CALLS:
                    return False  # `self.encoder(x)`, `self.register_parameter(...)`, an inherited helper
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and _is_self(f.value.value, me):
                    return False  # `self.layers.append(...)`, `self.encoder.forward(x)`
            elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    for sub in ast.walk(t):
                        if not (isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(sub.ctx, ast.Store)):
                            continue
                        if isinstance(sub, ast.Subscript) and _reaches_self(sub.value, me):
                            return False  # `self.cache[k] = v`
                        if isinstance(sub, ast.Attribute) and _reaches_self(sub.value, me) and not _is_self(sub.value, me):
                            return False  # `self.head.weight = ...`
                        if isinstance(sub, ast.Attribute) and _is_self(sub.value, me) and (
                                n.value is None or not _plain_value(n.value, plain_names, rooted)):
                            return False
    return True


def _is_self(node: ast.AST, me: str) -> bool:
    return isinstance(node, ast.Name) and node.id == me


def _reaches_self(node: ast.AST, me: str) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return _is_self(node, me)


def _plain_value(node: ast.AST, plain_names: set, rooted: set) -> bool:
    """Plain data: a constant, a name or attribute chain of configuration (`args.bs`; a bare name only when its
    default or annotation says it is a number, a bool or a string), builtins and arithmetic of such."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in plain_names
    if isinstance(node, ast.Attribute):
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        return isinstance(base, ast.Name) and base.id in rooted
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_plain_value(e, plain_names, rooted) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return _plain_value(node.left, plain_names, rooted) and _plain_value(node.right, plain_names, rooted)
    if isinstance(node, ast.UnaryOp):
        return _plain_value(node.operand, plain_names, rooted)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PLAIN_CALLS:
        return not node.keywords and all(_plain_value(a, plain_names, rooted) for a in node.args)
    return False
