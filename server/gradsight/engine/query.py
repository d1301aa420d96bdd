"""The syntax query API rules use for whole-file checks, and the observation that carries it.

Some problems are visible in the shape of the code once names are resolved: a `parameters()` generator handed
to two consumers, a custom `autograd.Function` whose `backward` returns too few gradients, a `.backward()` call
inside a module's `forward`. Rules for these receive one `FileEvent` per analysis and ask a `Query` instead of
re-walking the tree by spelling: qualified names (`import torch as T` and `from torch import no_grad` resolve
to `torch.no_grad`), the enclosing function and class of a node, whether a class is an `nn.Module`, and the
statements that follow a node in its block.

The query is built lazily from the tree and the module scope the interpreter already resolved; it never reads
files and never raises on odd code. It is created once per analysis, so every rule shares one walk.
"""

from __future__ import annotations

import ast
import bisect
import threading
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from .astwalk import children, dotted_name, walk
from .incremental import first_line
from .events import Event


# Top-level packages of deep-learning frameworks other than PyTorch. Their model objects have methods spelled like
# torch's (`parameters()`, `backward()`, `numpy()`) with other semantics: MXNet's `Block.parameters()` is not a
# one-shot generator. A file that imports one of them and nothing of torch is that framework's code.
_OTHER_FRAMEWORKS = frozenset({"mxnet", "tensorflow", "keras", "tf_keras", "jax", "flax", "haiku", "optax",
                               "paddle", "mindspore", "oneflow", "chainer", "theano", "cupy", "dynet"})


class Query:
    """Questions about one parsed file. Positions are the tree's; nothing is cached across analyses."""

    def __init__(self, tree: ast.Module, imports: dict, classes: dict, memo: Optional["NodeMemo"] = None,
                 path: str = "", resolve: Optional[Callable] = None, functions: Optional[dict] = None,
                 walker: Optional[Callable] = None, caller_stores: Optional[Callable] = None):
        self.tree = tree
        # () -> the attribute names other workspace files around this file's callers store on objects they hold
        # (`reverse.caller_stores`), asked at most once, only by a rule that needs it; None without a workspace.
        self._caller_stores = caller_stores
        self._stores: Optional[frozenset] = None
        # `astwalk.walk`, or the analysed source's memoised one (`Source.walk`), shared with the interpreter
        self._walker = walker or walk
        self._resolve = resolve  # resolve(module, level) -> another workspace file's ModuleScope, or None
        self._functions = functions or {}  # this file's top-level functions: name -> FuncVal
        self._imports = imports  # local name -> qualified name (module scope)
        self._classes = classes  # class name -> ClassInfo (with `is_module`)
        self._starts: Optional[list] = None  # each top-level statement's first line (decorators included)
        self._nodes: Optional[list] = None
        self._entries: Optional[list] = None  # one `TopStatement` per top-level statement, in order
        self._tops: dict = {}  # id(top-level statement) -> its `TopStatement`: `subtree`, `parent`
        self._memo = memo
        self._path = path
        self._idx: Optional[dict] = None
        self._module_names: Optional[set] = None
        self._handed: Optional[dict] = None  # id(class) -> attributes its `__init__` stores from its parameters
        self._roots: Optional[frozenset] = None

    def stored_by_callers(self, attr: str) -> bool:
        """Whether code of another workspace file that imports this one (or that such a file imports: the helpers it
        hands this file's objects to) stores the attribute `attr` on an object it holds (`model.hidden = ...`). Those
        files become dependencies of the analysis."""
        if self._caller_stores is None:
            return False
        if self._stores is None:
            self._stores = self._caller_stores()
        return attr in self._stores

    # -- names -------------------------------------------------------------------------------------------
    def function_def(self, name: str) -> Optional[tuple]:
        """`(def, its file's imports, its file's Source or None for this file)` for a plain function called by its
        bare name: this file's own top-level `def`, or one imported from another file of the workspace (`from .utils
        import gather`), read through the analysis's resolver (so that file is one of the analysis's recorded
        dependencies). None for anything else."""
        own = self._functions.get(name)
        if own is not None:
            return own.node, self._imports, None
        found = self._imported_function(self._imports.get(name), None)
        return found[:3] if found is not None else None

    def function_def_in(self, name: str, where=None) -> Optional[tuple]:
        """`function_def` for a name read inside another file's code: `where` is that file's module scope (the
        fourth item of an answer; None for this file), whose own functions and imports (relative ones from its
        folder) it is resolved in. `(def, imports, Source or None, scope or None)`."""
        if where is None:
            own = self._functions.get(name)
            if own is not None:
                return own.node, self._imports, None, None
            return self._imported_function(self._imports.get(name), None)
        own = getattr(where, "functions", {}).get(name)
        if own is not None:
            return own.node, where.imports, getattr(where, "source", None), where
        return self._imported_function(getattr(where, "imports", {}).get(name), where)

    def _imported_function(self, qual: Optional[str], where) -> Optional[tuple]:
        """`(def, imports, Source, scope)` of the top-level function an import's qualified name `qual` names in
        another workspace file (relative to `where`'s folder; this file's when None), or None."""
        if qual is None or self._resolve is None:
            return None
        level = len(qual) - len(qual.lstrip("."))
        module, _, attr = qual[level:].rpartition(".")
        if not attr or (not module and not level):
            return None
        try:
            other = self._resolve(module, level) if where is None else self._resolve(module, level, where)
        except (OSError, ValueError, RecursionError, TypeError):
            return None
        found = getattr(other, "functions", {}).get(attr) if other is not None else None
        return (found.node, other.imports, getattr(other, "source", None), other) if found is not None else None

    def method_def(self, cls: ast.ClassDef, name: str) -> Optional[ast.AST]:
        """The `def` that `self.name(...)` runs in a method of `cls`: the class's own, else its bases' (depth
        first, a few levels), bases in other workspace files included (read through the analysis's resolver).
        None when not found."""
        info = self._classes.get(cls.name)
        if info is None or getattr(info, "node", None) is not cls:
            return None
        todo, seen = [(info, None, 0)], set()
        while todo:
            info, where, depth = todo.pop(0)
            if id(info) in seen or depth > 4:
                continue
            seen.add(id(info))
            found = info.methods.get(name)
            if found is not None:
                return found.node
            for b in info.bases:
                if isinstance(b, str):
                    b, where_b = self._imported_class(b, getattr(info, "module", None) if depth else None)
                else:
                    where_b = where
                if b is not None:
                    todo.append((b, where_b, depth + 1))
        return None

    def plain_object(self, name: ast.Name) -> bool:
        """Is `name` surely an object of a plain class (not an `nn.Module`): every binding of it in the innermost
        enclosing function (or the module) that binds it calls a class of this file or of another workspace file
        (`mask_generator = mask_gen.BoxMaskGenerator(...)`) that is not a module, at any depth of its bases."""
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        scope = self.enclosing(name, kinds)
        while True:
            if scope is not None and name.id in {a.arg for a in [*scope.args.posonlyargs, *scope.args.args,
                                                                  *scope.args.kwonlyargs, scope.args.vararg,
                                                                  scope.args.kwarg] if a is not None}:
                return False  # handed in
            found = []
            for n in self._walker(scope if scope is not None else self.tree):
                t = type(n)
                if t is ast.Assign:
                    for target in n.targets:
                        if type(target) is ast.Name and target.id == name.id:
                            found.append(n.value)
                        elif type(target) is not ast.Name and any(type(m) is ast.Name and m.id == name.id
                                                                  for m in ast.walk(target)):
                            return False
                else:
                    targets = [i.optional_vars for i in n.items] if t in (ast.With, ast.AsyncWith) \
                        else [n.target] if t in (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr,
                                                 ast.comprehension) else ()
                    if any(x is not None and any(type(m) is ast.Name and m.id == name.id for m in ast.walk(x))
                           for x in targets):
                        return False
            if found or scope is None:
                break
            scope = self.enclosing(scope, kinds)
        return bool(found) and all(isinstance(v, ast.Call) and self._plain_class(v.func) for v in found)

    def _plain_class(self, func: ast.AST) -> bool:
        """Does `func` name a class known in the workspace that is not an `nn.Module`?"""
        if isinstance(func, ast.Name) and func.id in self._classes:
            info = self._classes[func.id]
            return not getattr(info, "is_module", True) and self._bases_plain(info, 0)
        qual = self.qualname(func)
        if qual is None:
            return False
        info, _ = self._imported_class(qual, None)
        return info is not None and not getattr(info, "is_module", True) and self._bases_plain(info, 0)

    def _bases_plain(self, info, depth: int) -> bool:
        """Whether no base of a class (followed a few levels, into other workspace files) may be a module: bases
        are this workspace's plain classes or `object`."""
        if depth > 4:
            return False
        for b in info.bases:
            if isinstance(b, str):
                if b == "object":
                    continue
                found, _ = self._imported_class(b, getattr(info, "module", None))
                if found is None or getattr(found, "is_module", True) or not self._bases_plain(found, depth + 1):
                    return False
            elif getattr(b, "is_module", True) or not self._bases_plain(b, depth + 1):
                return False
        return True

    def _imported_class(self, qual: str, where) -> tuple:
        """(ClassInfo, its module scope) of the class a base's qualified name names in another workspace file."""
        if self._resolve is None or "." not in qual or qual.startswith(("torch.", "typing.", "abc.", "numpy.")):
            return None, None
        level = len(qual) - len(qual.lstrip("."))
        module, _, attr = qual[level:].rpartition(".")
        if not module and not level:
            return None, None
        try:
            other = self._resolve(module, level) if where is None else self._resolve(module, level, where)
        except (OSError, ValueError, RecursionError, TypeError):
            return None, None
        found = getattr(other, "classes", {}).get(attr) if other is not None else None
        return (found, other) if found is not None else (None, None)

    def qualname(self, node: ast.AST) -> Optional[str]:
        """`T.no_grad` -> `torch.no_grad` when `import torch as T`; `nn.Linear` -> `torch.nn.Linear`."""
        name = dotted_name(node)
        if name is None:
            return None
        root, _, rest = name.partition(".")
        head = self._imports.get(root)
        if head is None:
            return None
        return f"{head}.{rest}" if rest else head

    def call_name(self, call: ast.AST) -> Optional[str]:
        return self.qualname(call.func) if isinstance(call, ast.Call) else None

    def is_module_class(self, cls: ast.ClassDef) -> bool:
        info = self._classes.get(cls.name)
        if info is not None and getattr(info, "node", None) is cls:
            return bool(getattr(info, "is_module", False))
        return any((self.qualname(b) or "").startswith("torch.nn.") and (self.qualname(b) or "").endswith("Module")
                   for b in cls.bases)

    def module_class_names(self) -> set:
        """Names of this file's classes that are `nn.Module`s."""
        if self._module_names is None:
            self._module_names = {n.name for n in self.class_defs if self.is_module_class(n)}
        return self._module_names

    def is_module_constructor(self, node: ast.AST) -> bool:
        """`nn.Linear(...)`, `torch.nn.Sequential(...)` or `Net(...)` of a module class of this file: a call that
        makes an `nn.Module` (parameters, `nn.functional` and lower-case factories are not)."""
        if not isinstance(node, ast.Call):
            return False
        name = self.call_name(node) or ""
        last = name.rsplit(".", 1)[-1]
        if name.startswith("torch.nn.") and ".functional." not in name and ".parameter." not in name \
                and last[:1].isupper() and not last.startswith("Parameter"):
            return True
        return isinstance(node.func, ast.Name) and node.func.id in self.module_class_names()

    def subclasses(self, qualified: str) -> Iterator[ast.ClassDef]:
        """Classes of this file with a base that resolves to `qualified` (e.g. `torch.autograd.Function`)."""
        for node in self.class_defs:
            if any(self.qualname(b) == qualified for b in node.bases):
                yield node

    @property
    def imported_roots(self) -> frozenset:
        """The top-level packages of the file's module-level absolute imports (`from mxnet.gluon import nn` gives
        "mxnet"); imports inside functions and classes are not read."""
        if self._roots is None:
            # Module-level imports only (also inside a module-level `try`/`if`/`with`): a walk of every node cost
            # 7 ms a keystroke on timm's vision_transformer.py.
            roots = set()
            todo = list(self.tree.body)
            while todo:
                n = todo.pop()
                if isinstance(n, ast.Import):
                    roots.update(a.name.split(".")[0] for a in n.names)
                elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
                    roots.add(n.module.split(".")[0])
                elif isinstance(n, (ast.If, ast.Try, ast.With)) or type(n).__name__ == "TryStar":
                    for field in ("body", "orelse", "finalbody"):
                        todo.extend(getattr(n, field, ()))
                    for handler in getattr(n, "handlers", ()):
                        todo.extend(handler.body)
            self._roots = frozenset(roots)
        return self._roots

    def other_framework(self) -> bool:
        """Whether this is another framework's code: the file imports MXNet, TensorFlow, JAX, Paddle, ... and
        nothing of torch, so a `.parameters()` or `.backward()` in it is that framework's method. A file that
        imports neither (a helper handed a model) is not known to be anything else and stays torch code."""
        roots = self.imported_roots
        return "torch" not in roots and not roots.isdisjoint(_OTHER_FRAMEWORKS)

    # -- structure ---------------------------------------------------------------------------------------
    def nodes(self) -> list:
        """Every node of the file (the module first, then each top-level statement's nodes, breadth first).

        While typing, the engine splices re-parsed statements between the previous version's statement objects,
        which are shared and never mutated; with a `NodeMemo` the walk of such a statement is reused, so a
        keystroke walks only what it changed."""
        if self._nodes is None:
            nodes = [self.tree]
            for entry in self._top_entries():
                nodes.extend(entry.nodes)
            self._nodes = nodes
        return self._nodes

    def _top_entries(self) -> list:
        if self._entries is None:
            body = self.tree.body
            if self._memo is not None:
                entries = self._memo.entries(self._path, body, self._walker)
            else:
                entries = [TopStatement(stmt, self._walker(stmt)) for stmt in body]
            self._tops = {id(e.stmt): e for e in entries}
            self._entries = entries
        return self._entries

    def per_statement(self, key: str, compute: Callable) -> list:
        """`[compute(top) for each top-level statement]`, where `top` is its `TopStatement` (`top.stmt`, its walk
        `top.nodes`, and the statement's own `calls`, `assigns`, `functions`, `classes`, `call_statements` in walk
        order).

        With a `NodeMemo` each answer is kept with the statement object and reused while typing elsewhere, so a
        whole-file rule that surveys every statement pays per keystroke only for the statements the keystroke
        re-parsed. `compute` must depend on the statement's own nodes alone (not on other statements, imports,
        the path or the analysis), and its answer is shared read-only across analyses; `key` names the survey
        (the rule's code and what it collects)."""
        out = []
        for entry in self._top_entries():
            extra = entry.extra
            if extra is None:
                extra = entry.extra = {}
            hit = extra.get(key, _MISSING)
            if hit is _MISSING:
                hit = extra[key] = compute(entry)
            out.append(hit)
        return out

    def surveyed(self, key: str, compute: Callable) -> list:
        """`per_statement` flattened: the items every statement's survey listed, in statement order."""
        out: list = []
        for part in self.per_statement(key, compute):
            if part:
                out.extend(part)
        return out

    def calls(self) -> Iterator[ast.Call]:
        return iter(self._index()["calls"])

    @property
    def assigns(self) -> list:
        """Every `ast.Assign` of the file, in walk order."""
        return self._index()["assigns"]

    @property
    def attrs(self) -> set:
        """Every attribute name read or written (`x.backward` gives "backward"): a cheap "does the file even
        mention it?" test that whole-file rules run before anything else, since they run on every keystroke."""
        return self._index()["attrs"]

    @property
    def imported(self) -> frozenset:
        """The qualified names the module-level imports bind (`torch.no_grad` for `from torch import no_grad`)."""
        return frozenset(self._imports.values())

    @property
    def attr_stores(self) -> set:
        return self._index()["attr_stores"]

    @property
    def functions(self) -> list:
        """Every function definition of the file (`def` and `async def`), in walk order."""
        return self._index()["functions"]

    @property
    def class_defs(self) -> list:
        """Every class definition of the file, in walk order."""
        return self._index()["classes"]

    @property
    def name_stores(self) -> set:
        return self._index()["name_stores"]

    @property
    def call_statements(self) -> list:
        """Every expression statement whose expression is a call (`torch.no_grad()` on a line of its own), in walk
        order."""
        return self._index()["call_stmts"]

    def subtree(self, node: ast.AST) -> list:
        """`astwalk.walk(node)`: every node under `node`, itself first, in `ast.walk`'s order. A top-level
        statement's list is the one `nodes` already made (kept across keystrokes by the `NodeMemo`); callers only
        read it."""
        self._top_entries()
        hit = self._tops.get(id(node))
        return hit.nodes if hit is not None and hit.stmt is node else self._walker(node)

    def _index(self) -> dict:
        if self._idx is None:
            calls, assigns, functions, classes, call_stmts = [], [], [], [], []
            attrs, attr_stores, name_stores = [], [], []
            # Each top-level statement's share is kept with it (`TopStatement.index`), so a keystroke indexes only the
            # statements it re-parsed; the shares are joined in statement order (the order of `nodes()`).
            for entry in self._top_entries():
                c, a, f, k, cs, at, ast_, ns = entry._share()
                if c:
                    calls.extend(c)
                if a:
                    assigns.extend(a)
                if f:
                    functions.extend(f)
                if k:
                    classes.extend(k)
                if cs:
                    call_stmts.extend(cs)
                attrs.append(at)
                attr_stores.append(ast_)
                name_stores.append(ns)
            self._idx = {"calls": calls, "assigns": assigns, "attrs": set().union(*attrs),
                         "attr_stores": set().union(*attr_stores), "name_stores": set().union(*name_stores),
                         "functions": functions, "classes": classes, "call_stmts": call_stmts}
        return self._idx

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        """The node's parent. Parent links are built only for the top-level statement that holds the node (found
        by its line), and kept with that statement across keystrokes (`TopStatement.parents`), so a rule asking about a
        few nodes does not pay for a map of the whole file."""
        if node is self.tree:
            return None
        top = self._top_of(node)
        for entry in ([top] if top is not None else self._top_entries()):
            if entry.stmt is node:
                return self.tree
            parents = entry.parents
            if parents is None:
                parents = {}
                for parent in entry.nodes:
                    for child in children(parent):
                        parents[child] = parent
                entry.parents = parents
            hit = parents.get(node)
            if hit is not None:
                return hit
        return None

    def ancestors(self, node: ast.AST) -> list:
        """`node`, its parent, the parent's parent, ... up to the module: `parent` followed to the top."""
        chain = [node]
        while (up := self.parent(chain[-1])) is not None:
            chain.append(up)
        return chain

    def _top_of(self, node: ast.AST) -> Optional[TopStatement]:
        """The `TopStatement` whose lines hold `node` (by its first line), or None."""
        line = getattr(node, "lineno", None)
        if line is None:
            return None
        entries = self._top_entries()
        if self._starts is None:
            self._starts = [first_line(s) for s in self.tree.body]
        i = bisect.bisect_right(self._starts, line) - 1
        if i < 0:
            return None
        entry = entries[i]
        return entry if line <= getattr(entry.stmt, "end_lineno", line) else None

    def enclosing(self, node: ast.AST, kinds) -> Optional[ast.AST]:
        """The nearest ancestor of `node` of one of `kinds` (a class or a tuple of classes)."""
        if _DEF_KINDS.issuperset(kinds if isinstance(kinds, tuple) else (kinds,)) and hasattr(node, "end_lineno"):
            return self._enclosing_def(node, kinds)
        node = self.parent(node)
        while node is not None and not isinstance(node, kinds):
            node = self.parent(node)
        return node

    def _enclosing_def(self, node: ast.AST, kinds) -> Optional[ast.AST]:
        """`enclosing` for function and class definitions, by position instead of parent links: a definition's
        span (decorators included) holds exactly its own nodes, since nothing follows a compound statement on its
        last line, and of two definitions that hold a node the inner one starts later. Candidates are the
        definitions of the top-level statement that holds `node` (its index share). A keystroke in a large class
        would otherwise link the parents of all its nodes again."""
        entry = self._top_of(node)
        if entry is None:
            return None
        ids = entry.ids
        if ids is None:  # (made once per statement object: a rule may ask about many nodes of a large statement)
            ids = entry.ids = set(map(id, entry.nodes))
        if id(node) not in ids:  # a node of another file's tree (the statement's nodes are alive: ids are theirs)
            return None
        part = entry._share()
        start = (node.lineno, node.col_offset)
        end = (node.end_lineno, node.end_col_offset)
        found, found_at = None, None
        for d in (*part[2], *part[3]):  # the statement's functions and classes
            if d is node or not isinstance(d, kinds):
                continue
            at = (first_line(d), 0) if d.decorator_list else (d.lineno, d.col_offset)
            if at <= start and end <= (d.end_lineno, d.end_col_offset) and (found_at is None or at > found_at):
                found, found_at = d, at
        return found

    def enclosing_function(self, node: ast.AST) -> Optional[ast.AST]:
        return self.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))

    def statement(self, node: ast.AST) -> Optional[ast.stmt]:
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parent(node)
        return node

    def following(self, stmt: ast.stmt) -> list:
        """The statements after `stmt` in its own block (not the enclosing blocks)."""
        parent = self.parent(stmt)
        if parent is None:
            return []
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and stmt in block:
                return block[block.index(stmt) + 1:]
        return []

    def handed_in_call(self, call: ast.Call, fn: ast.AST) -> bool:
        """Is `call` a call of an object function `fn` was handed, which gradsight cannot see into when `fn` is
        analysed on its own: `model(...)` for a parameter `model` of `fn`, or `self.model(...)` where the
        enclosing class's `__init__` stored one of its parameters in `self.model`."""
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        f = call.func
        if isinstance(f, ast.Name):
            params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
            return f.id in params and f.id not in ("self", "cls")
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            return f.attr in self._handed_in(self.enclosing(fn, (ast.ClassDef,)))
        return False

    def _handed_in(self, cls: Optional[ast.ClassDef]) -> set:
        """Attributes `cls.__init__` sets straight from one of its parameters (`self.model = model`, also
        `self.gen, self.disc = gen, disc`), or from a call
        of a method of `cls` that does nothing, a hook its subclasses fill in (`self.netD = self.getNetD()` where
        `def getNetD(self): pass`): either way an object the class's own code cannot see into."""
        if cls is None:
            return set()
        if self._handed is None:
            self._handed = {}
        hit = self._handed.get(id(cls))
        if hit is not None:
            return hit
        out: set = set()
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is not None:
            params = {a.arg for a in [*init.args.args, *init.args.kwonlyargs]} - {"self"}
            hooks = {f.name for f in cls.body if isinstance(f, ast.FunctionDef) and _hook_body(f)}
            for n in ast.walk(init):
                if not isinstance(n, ast.Assign):
                    continue
                pairs = [(t, n.value) for t in n.targets]
                # `self.gen, self.disc = gen, disc`: element by element.
                pairs += [(t, v) for tup in n.targets if isinstance(tup, ast.Tuple) and isinstance(n.value, ast.Tuple)
                          and len(tup.elts) == len(n.value.elts) for t, v in zip(tup.elts, n.value.elts)]
                for t, v in pairs:
                    if (isinstance(v, ast.Name) and v.id in params or isinstance(v, ast.Call) and not v.args
                            and not v.keywords and isinstance(v.func, ast.Attribute) and v.func.attr in hooks
                            and isinstance(v.func.value, ast.Name) and v.func.value.id == "self") \
                            and isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        out.add(t.attr)
        self._handed[id(cls)] = out
        return out

    def names_loaded(self, node: ast.AST, name: str) -> list:
        return [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


def _hook_body(fn: ast.FunctionDef) -> bool:
    """A method whose body does nothing but document itself, `pass`, `...`, or raise `NotImplementedError`: a hook
    its subclasses define."""
    if fn.decorator_list:
        return False
    for st in fn.body:
        if isinstance(st, ast.Pass) or isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        if isinstance(st, ast.Raise) and st.exc is not None \
                and (dotted_name(st.exc.func if isinstance(st.exc, ast.Call) else st.exc) or "") == "NotImplementedError":
            continue
        return False
    return True


def _statement_index(nodes: list) -> tuple:
    """One top-level statement's share of `Query._index`: (calls, assigns, functions, classes, call statements,
    attribute names, attribute names stored, names stored), each in walk order."""
    calls, assigns, functions, classes, call_stmts = [], [], [], [], []
    attrs, attr_stores, name_stores = set(), set(), set()
    name, attribute, call, assign, store, expr = ast.Name, ast.Attribute, ast.Call, ast.Assign, ast.Store, ast.Expr
    fdef, adef, cdef = ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef
    # (identity tests only, no call per node: this walks every node of a re-parsed statement on every keystroke)
    for n in nodes:
        t = type(n)
        if t is name:  # the commonest node first
            if type(n.ctx) is store:
                name_stores.add(n.id)
        elif t is attribute:
            attrs.add(n.attr)
            if type(n.ctx) is store:
                attr_stores.add(n.attr)
        elif t is call:
            calls.append(n)
        elif t is assign:
            assigns.append(n)
        elif t is fdef or t is adef:
            functions.append(n)
        elif t is cdef:
            classes.append(n)
        elif t is expr and type(n.value) is call:
            call_stmts.append(n)
    return calls, assigns, functions, classes, call_stmts, attrs, attr_stores, name_stores


_MISSING = object()
_DEF_KINDS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})




class TopStatement:
    """What is known of one top-level statement object: its walk, and (made when first asked) its share of the
    file index, its parent links and the rules' per-statement surveys (`Query.per_statement`). Statement objects
    are never mutated, so all of it holds as long as the object is reused."""

    __slots__ = ("stmt", "nodes", "index", "parents", "ids", "extra")

    def __init__(self, stmt: ast.stmt, nodes: list) -> None:
        self.stmt, self.nodes = stmt, nodes
        self.index: Optional[tuple] = None
        self.parents: Optional[dict] = None
        self.ids: Optional[set] = None  # ids of `nodes`, for `Query._enclosing_def`
        self.extra: Optional[dict] = None

    def _share(self) -> tuple:
        if self.index is None:
            self.index = _statement_index(self.nodes)
        return self.index

    # The statement's own nodes of each kind, in walk order (its share of `Query._index`).
    calls = property(lambda self: self._share()[0])
    assigns = property(lambda self: self._share()[1])
    functions = property(lambda self: self._share()[2])
    classes = property(lambda self: self._share()[3])
    call_statements = property(lambda self: self._share()[4])


class NodeMemo:
    """What is known of top-level statements (`TopStatement`), per file, kept for the statement objects of the file's last
    version.

    Owned by an `Engine` (never module-level). Only the latest version's statements are kept per path, and
    only for the last `max_files` paths, so memory stays that of a few files' nodes."""

    def __init__(self, max_files: int = 8):
        self.max_files = max_files
        self._files: dict = {}  # path -> {id(stmt): TopStatement}
        self._lock = threading.Lock()  # the language server analyses in worker threads

    def entries(self, path: str, body: list, walker: Callable = walk) -> list:
        with self._lock:
            old = self._files.pop(path, {})
        new = {}
        out = []
        for stmt in body:
            hit = old.get(id(stmt))
            if hit is None or hit.stmt is not stmt:
                hit = TopStatement(stmt, walker(stmt))  # read only, never changed
            new[id(stmt)] = hit
            out.append(hit)
        with self._lock:
            self._files[path] = new
            while len(self._files) > self.max_files:
                del self._files[next(iter(self._files))]
        return out

    def clear(self) -> None:
        self._files.clear()


@dataclass(frozen=True)
class FileEvent(Event):
    """Once per analysis, after the interpreter ran: `node` is the module, `query` answers questions about it."""

    query: Query = None  # type: ignore[assignment]
