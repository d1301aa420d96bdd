"""The abstract domain: what the interpreter knows about each value.

Lattice, per field: three-valued facts (`Tri`) join to MAYBE when they disagree; facts that explain
(`Fact`) keep the first known explanation; sets (graph segments, gradient sources) join by union.
A variable missing on one path is bottom: joining it with a value gives that value.
Joining values of different kinds gives `UNKNOWN`, the top element, about which nothing is said.
"""

from __future__ import annotations

import enum
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Optional

from .words import (CREATED_WITHOUT_GRAD, GRAD_MODE_OFF, MADE_LEAF_REQUIRE_GRAD, MAYBE_SAME_LEAF, ONLY_FROM_NO_GRAD,  # noqa: F401
                    USE, render)


class Tri(enum.Enum):
    NO = 0
    YES = 1
    MAYBE = 2

    def join(self, other: "Tri") -> "Tri":
        return self if self is other else Tri.MAYBE

    @staticmethod
    def of(flag: Optional[bool]) -> "Tri":
        return Tri.MAYBE if flag is None else (Tri.YES if flag else Tri.NO)


@dataclass(frozen=True, eq=False)
class Fact:
    """One step of an explanation, as data: what happened at a line. `kind` says what the step is (a key of
    `words.FACT_WORDS`), `args` holds its structured arguments as (name, value) pairs (the expression as written,
    the op, a name); the words are made from them only when shown (`text`), and decisions read `kind` and
    `arg()`, never `text`. `parent` links to the earlier cause."""

    line: int
    column: int
    kind: str
    args: tuple = ()
    parent: Optional["Fact"] = None
    path: Optional[str] = None  # None: the file being analysed

    def __hash__(self) -> int:
        return _cached_hash(self)

    def __eq__(self, other: object) -> bool:
        # Facts are compared inside every value comparison of a loop fixpoint, and each holds its cause chain:
        # identity and the cached hash settle most comparisons before the fields (and parents) are walked.
        if self is other:
            return True
        if other.__class__ is not Fact:
            return NotImplemented
        if _cached_hash(self) != _cached_hash(other):
            return False
        return (self.line == other.line and self.column == other.column and self.kind == other.kind
                and self.args == other.args and self.path == other.path and self.parent == other.parent)

    @property
    def text(self) -> str:
        # Rendered once per fact: a fact is shared by every value it explains, and hovers show each chain.
        t = self.__dict__.get("_text")
        if t is None:
            t = render(self.kind, self.args)
            object.__setattr__(self, "_text", t)
        return t

    def arg(self, name: str, default: Any = None) -> Any:
        for key, value in self.args:
            if key == name:
                return value
        return default

    def chain(self, limit: int = 8) -> list["Fact"]:
        out: list[Fact] = []
        node: Optional[Fact] = self
        while node is not None and len(out) < limit:
            out.append(node)
            node = node.parent
        return list(reversed(out))


# Fact kinds decisions use (their words are in `words.FACT_WORDS`, like every other kind's).
FACT_KINDS = frozenset({CREATED_WITHOUT_GRAD, GRAD_MODE_OFF, ONLY_FROM_NO_GRAD, MADE_LEAF_REQUIRE_GRAD})


def _cached_hash(obj: Any) -> int:
    """Frozen values are hashed often (memo keys of call summaries) and hold long fact chains: hash once."""
    d = obj.__dict__
    h = d.get("_hash")
    if h is None:
        names = obj.__class__.__dict__.get("_gs_fields")
        if names is None:
            names = tuple(f.name for f in fields(obj))
        h = hash(tuple([d[name] for name in names]))
        object.__setattr__(obj, "_hash", h)
    return h


def _fast_frozen(cls):
    """Give a frozen dataclass an `__init__` that sets its whole `__dict__` at once.

    The generated one calls `object.__setattr__` once per field; `TensorVal` has 35 fields and the interpreter
    makes one per tensor expression it evaluates, so this is a measurable part of every statement
    (docs/performance.md, the long-script benchmark). Same fields, defaults and checks (a missing or unknown
    argument raises `TypeError`); plain defaults only (a `default_factory` field is refused). The class stays a
    frozen dataclass (equality, hashing, `fields()`)."""
    names = tuple(f.name for f in fields(cls))
    defaults = {}
    for f in fields(cls):
        if f.default_factory is not MISSING:  # type: ignore[misc]
            raise TypeError(f"{cls.__name__}.{f.name}: _fast_frozen needs plain defaults")
        if f.default is not MISSING:
            defaults[f.name] = f.default
    n_fields = len(names)
    set_attr = object.__setattr__

    def __init__(self, *args, **kwargs):
        d = dict(defaults)
        if args:
            if len(args) > n_fields:
                raise TypeError(f"{cls.__name__}() takes {n_fields} arguments, {len(args)} given")
            d.update(zip(names, args))
            if kwargs and any(k in kwargs for k in names[:len(args)]):
                raise TypeError(f"{cls.__name__}() got multiple values for an argument")
        d.update(kwargs)
        if len(d) != n_fields:
            missing = [n for n in names if n not in d]
            raise TypeError(f"{cls.__name__}(): missing {missing}" if missing else
                            f"{cls.__name__}(): unexpected {sorted(set(d) - set(names))}")
        set_attr(self, "__dict__", d)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = __init__
    cls._gs_fields = names  # the field names, for `_cached_hash`
    return cls


def _remake(obj: Any, changes: dict) -> Any:
    """`dataclasses.replace` for the frozen values above, without re-running `__init__` field by field."""
    d = dict(obj.__dict__)
    d.pop("_hash", None)
    d.update(changes)
    new = object.__new__(obj.__class__)
    object.__setattr__(new, "__dict__", d)
    return new


def _first(a: Optional[Fact], b: Optional[Fact]) -> Optional[Fact]:
    return a if a is not None else b


class Value:
    """Base of all abstract values."""

    def join(self, other: "Value") -> "Value":
        if self == other:
            return self
        return UNKNOWN


@dataclass(frozen=True)
class UnknownVal(Value):
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = UnknownVal()


@dataclass(frozen=True)
class TensorVal(Value):
    rg: Tri = Tri.MAYBE  # requires_grad
    leaf: Tri = Tri.MAYBE  # True: no grad_fn (created by the user or detached); False: has history
    origin: Optional[Fact] = None  # where this value was produced
    nograd: Optional[Fact] = None  # why it does not require grad (detach, no_grad, .tolist() round trip, ...)
    saved: Optional[Fact] = None  # the op that saved this value for backward
    saved_sure: bool = True  # with `saved`: saved on every path here (False: only on some, e.g. one `if` branch)
    freed: Optional[Fact] = None  # a backward that freed part of the graph this value's history runs through
    freed_sure: bool = True
    segs: frozenset = frozenset()  # sites of graph nodes in this value's history that hold saved tensors
    sources: frozenset = frozenset()  # sites of leaves created with requires_grad=True feeding this history
    param: bool = False  # an nn.Parameter / module parameter
    inference: bool = False  # created under torch.inference_mode()
    shape: Optional[tuple] = None  # known shape; () is a scalar
    is_int: Tri = Tri.MAYBE  # integer dtype
    carried: Optional[Fact] = None  # the loop-carried assignment that brought a freed graph into this step
    via: Optional[Fact] = None  # where a freed tensor was used again (its text is that tensor's expression)
    zerograd: Optional[Fact] = None  # every gradient path runs through an op whose gradient is zero (round, sign)
    view: Optional[Fact] = None  # a view of another tensor (basic indexing, .view(), .transpose(), ...)
    multiview: bool = False  # an output of split/chunk/unbind: may not be modified in place
    nograd_view: bool = False  # a view created under no_grad of a tensor that requires grad
    # The output of a custom `autograd.Function` whose `forward` returns an input as-is (or a view of one), or a view
    # of such an output: torch makes it a view created inside a custom Function, which may not be modified in place
    # when it requires grad. The fact is the `apply` call; `fnview_sure` is False where only some paths made it so.
    fnview: Optional[Fact] = None
    fnview_sure: bool = True
    is_data: bool = False  # `t.data`: same storage, no autograd tracking
    retains: bool = False  # retain_grad() was called: `.grad` of this non-leaf is populated
    leaf_view: bool = False  # a view of a leaf that requires grad (in-place on it raises)
    saved_seg: Optional[tuple] = None  # graph segment (op site) of the op that saved it
    # A backward consumed the graph that saved this value on some path here (`if model.training: loss.backward()`
    # before a write into the model's output): with `saved_sure` False, the paths that still hold the save are
    # the ones that skipped that backward.
    saved_gone: Optional[Fact] = None
    gained: bool = False  # history starts here (a module's parameters met inputs without grad); for inlay hints
    psaved: frozenset = frozenset()  # sites of modules (and parameters) whose parameters an op in this graph saved
    stepped: Optional[Fact] = None  # an `optimizer.step()` updated parameters this live graph saved
    psrc: frozenset = frozenset()  # sites of modules whose parameters reach this value with their gradient path
    pcut: frozenset = frozenset()  # (module site, Fact of the cut): parameters whose path to this value was cut
    psrc_partial: bool = False  # an unknown value fed this one: `psrc` may miss modules
    # The abstract storage (heap cell): the site of the allocation whose memory and version counter this tensor
    # shares. Views, `.detach()`, basic indexing and iteration keep their base's storage, so an in-place write
    # through any alias is checked against everything saved from that storage. None: not known.
    storage: Optional[tuple] = None
    stored: Optional[Fact] = None  # the assignment that kept this graph in long-lived storage (`self.cached = ...`)
    # A bootstrapped target (`r + gamma * v`): a sum of a term that no module's parameters reach and a scaled term
    # whose graph runs through modules; the fact is where that term's tensor was made (the value to detach).
    boot: Optional[Fact] = None
    # A log-probability from a `torch.distributions` object (`dist.log_prob(a)`), kept through shape ops,
    # reductions, `exp` and arithmetic with values without gradient (the PPO ratio): the fact is where it was made.
    logp: Optional[Fact] = None
    # An advantage-shaped value: a difference (`returns - values`) whose graph runs through a module an optimizer
    # trains; the fact is the subtraction (where `.detach()` goes). See `interp_dists.DistsMixin.pg_markers`.
    adv: Optional[Fact] = None
    # `rg` is known from evidence of use only (the output of a model loaded by `torch.load`, of an object whose
    # parameters an optimizer takes): rules report such findings as warnings, never as errors.
    evidence: bool = False

    def join(self, other: Value) -> Value:
        if not isinstance(other, TensorVal):
            return UNKNOWN
        if self == other:
            return self
        # Prefer the later path's backward (the loop body over the loop entry): it names the nearer cause.
        freed = _first(other.freed, self.freed)
        return TensorVal(
            rg=self.rg.join(other.rg),
            leaf=self.leaf.join(other.leaf),
            # Where only one path has a graph through modules, its origin (where a bootstrap value was made, GS421).
            origin=other.origin if self.rg is Tri.NO and other.rg is not Tri.NO and other.psrc
            else _first(self.origin, other.origin),
            nograd=self.nograd if self.nograd is not None and other.nograd is not None else None,
            saved=_first(self.saved, other.saved),
            # The save's graph segment goes with it where only one path saved (or both paths saved at one site), so
            # a save whose graph dies with a call's locals is pruned whichever branch of the callee made the value.
            saved_seg=_joined_seg(self, other),
            saved_gone=_first(self.saved_gone, other.saved_gone),
            saved_sure=(self.saved_sure and other.saved_sure) if self.saved is None and other.saved is None
            else bool(self.saved and other.saved and self.saved_sure and other.saved_sure),
            freed=freed,
            # Only meaningful with `freed`: without it on either side, keep the default, so that joining values
            # that differ elsewhere does not make an otherwise equal state differ at a loop head.
            freed_sure=(self.freed_sure and other.freed_sure) if freed is None
            else bool(self.freed and other.freed and self.freed_sure and other.freed_sure),
            segs=self.segs | other.segs,
            sources=self.sources | other.sources,
            param=self.param and other.param,
            inference=self.inference and other.inference,
            shape=self.shape if self.shape == other.shape else None,
            is_int=self.is_int.join(other.is_int),
            carried=_first(self.carried, other.carried),
            via=_first(self.via, other.via),
            zerograd=self.zerograd if self.zerograd is not None and other.zerograd is not None else None,
            view=_first(self.view, other.view),
            multiview=self.multiview and other.multiview,
            nograd_view=self.nograd_view and other.nograd_view,
            fnview=_first(self.fnview, other.fnview),
            fnview_sure=bool(self.fnview and other.fnview and self.fnview_sure and other.fnview_sure)
            if self.fnview is not None or other.fnview is not None else True,
            is_data=self.is_data and other.is_data,
            retains=self.retains or other.retains,
            gained=self.gained and other.gained,
            leaf_view=self.leaf_view and other.leaf_view,
            psaved=self.psaved | other.psaved,
            stepped=_first(self.stepped, other.stepped),
            psrc=self.psrc | other.psrc,
            pcut=self.pcut | other.pcut,
            psrc_partial=self.psrc_partial or other.psrc_partial,
            storage=self.storage if self.storage == other.storage else None,
            stored=_first(self.stored, other.stored),
            evidence=self.evidence or other.evidence,
            boot=self.boot if self.boot is not None and other.boot is not None else None,
            logp=self.logp if self.logp is not None and other.logp is not None else None,
            adv=self.adv if self.adv is not None and other.adv is not None else None,
        )

    def with_(self, **changes: Any) -> "TensorVal":
        if "saved" in changes:
            if "saved_sure" not in changes:
                changes["saved_sure"] = True  # a new save (or none) is certain on this path
            if "saved_gone" not in changes:
                changes["saved_gone"] = None
        return _remake(self, changes)

    def __hash__(self) -> int:
        return _cached_hash(self)

    def __eq__(self, other: object) -> bool:
        # Loop fixpoints compare whole states each round: identity and the cached hashes settle most comparisons
        # without walking the fact chains field by field.
        if self is other:
            return True
        if other.__class__ is not TensorVal:
            return NotImplemented
        if _cached_hash(self) != _cached_hash(other):
            return False
        mine, theirs = self.__dict__, other.__dict__
        for name in _TENSOR_FIELDS:
            if mine[name] != theirs[name]:
                return False
        return True


@dataclass(frozen=True)
class PyVal(Value):
    """Plain Python data (numbers, lists of numbers, numpy arrays). `cut` remembers tensor data that
    left autograd (`.item()`, `.tolist()`, `.numpy()`), so a later `torch.tensor(...)` can say why."""

    cut: Optional[Fact] = None
    is_tensor_list: bool = False
    pcut: frozenset = frozenset()  # as `TensorVal.pcut`: module parameters whose path was cut on the way here
    scalar: bool = False  # surely a Python number (a numeric constant, a `range()` element, arithmetic on those)
    scalar_items: bool = False  # an iterable of Python numbers (`range(...)`)
    is_none: bool = False  # surely `None`
    truth: Optional[bool] = None  # surely `True` / `False` (a bool constant; a default a call left as it is)
    string: Optional[str] = None  # surely this string (a string constant; a string a call passed or left as default)
    boolean: bool = False  # surely a bool (a `True`/`False` constant, a `not`), so `truth=False` is `False` itself

    def join(self, other: Value) -> Value:
        if self is other:
            return self
        if self.is_none and isinstance(other, ObjectVal):
            return other.join(self)
        if not isinstance(other, PyVal):
            return UNKNOWN
        return PyVal(cut=_first(self.cut, other.cut), pcut=self.pcut | other.pcut,
                     scalar=self.scalar and other.scalar, scalar_items=self.scalar_items and other.scalar_items,
                     is_none=self.is_none and other.is_none, truth=self.truth if self.truth == other.truth else None,
                     string=self.string if self.string == other.string else None,
                     boolean=self.boolean and other.boolean)


@dataclass(frozen=True)
class ModuleRef(Value):
    """A qualified name reached through imports: `torch.nn.functional`, `torch.no_grad`. A workspace module
    imported relatively (`from . import tcn`) keeps its relative name and the path of the file it is relative to
    (`origin`), so that `tcn.TemporalConvNet` resolves from that file's folder wherever the name is used."""

    qual: str
    origin: Optional[str] = None


@dataclass(frozen=True)
class ModuleVal(Value):
    """An nn.Module instance: a torch.nn class (`qual`) or a user subclass (`cls`)."""

    qual: str
    cls: Any = None  # ClassInfo for user-defined modules
    layers: tuple = ()  # nn.Sequential children, in order
    # An nn.Sequential with a child gradsight cannot see (`SamePad` from another package): the known children
    # before the first unknown one, which still run first on its input (what they save is saved).
    head: tuple = ()
    inplace: bool = False  # nn.ReLU(inplace=True) and friends
    has_params: Tri = Tri.YES
    reduction: Optional[str] = None  # loss modules
    origin: Optional[Fact] = None
    attrs: tuple = ()  # (name, Value) pairs from __init__ (user modules)
    eval_at: Optional[Fact] = None  # `.eval()` was called on it here
    # `.eval()` (or `.train(False)`) ran on it on every path here, with no `.train()` after: `self.training` is False.
    eval_sure: bool = False
    out_features: Optional[int] = None  # nn.Linear: the size of the output's last dimension
    # A name bound to different modules on different paths (`model = A() if flag else B()`): the alternatives.
    # `qual` is then "torch.nn.Module"; a call runs each alternative and joins the results.
    alts: tuple = ()
    evidence: bool = False  # known to be a module with parameters from its use only (`torch.load(path)(x)`)

    def attr(self, name: str) -> Optional[Value]:
        for key, val in self.attrs:
            if key == name:
                return val
        return None

    def join(self, other: Value) -> Value:
        if isinstance(other, ModuleVal) and self.eval_sure != other.eval_sure:
            # In eval mode on one path only: not surely; otherwise joined as before (the same module stays itself).
            mine, theirs = replace(self, eval_sure=False), replace(other, eval_sure=False)
            return mine if mine == theirs else mine.join(theirs)
        if isinstance(other, ModuleVal) and other.qual == self.qual and other.cls is self.cls and not (
                self.alts or other.alts):
            if self == other:
                return self
            has = self.has_params.join(other.has_params)
            if self.layers != other.layers and self.qual.endswith("ModuleList"):
                # A ModuleList filled by `append` in a loop, joined with what it held before: every layer either
                # side may hold (iterating it joins them anyway).
                layers = tuple(dict.fromkeys(self.layers + other.layers)) if self.layers or other.layers else ()
                return replace(self, layers=layers if len(layers) <= 8 else (), has_params=has)
            if self.head != other.head:
                return replace(self, has_params=has, head=())
            return replace(self, has_params=has)
        if isinstance(other, ModuleVal):
            alts = tuple(dict.fromkeys((self.alts or (self,)) + (other.alts or (other,))))
            if len(alts) > 4:
                return UNKNOWN
            return ModuleVal("torch.nn.Module", has_params=self.has_params.join(other.has_params),
                             origin=_first(self.origin, other.origin), alts=alts)
        return UNKNOWN


@dataclass(frozen=True)
class ObjectVal(Value):
    """An instance of a plain class of the analysed code (a `Trainer`, an `Agent`, an `AverageMeter`): its
    methods and the attributes its `__init__` set. `changed` names the attributes that code run on it since
    (its methods, or code it was handed to) may have rebound or modified ("*": any); those are UNKNOWN."""

    cls: Any  # ClassInfo
    attrs: tuple = ()  # (name, Value) pairs from __init__
    origin: Optional[Fact] = None
    changed: frozenset = frozenset()
    # On some path the name holds `None` instead (`ema = EMA(net) if args.ema else None`): the object where a test
    # such as `if ema is not None:` let it through (`StatementsMixin.refine_none`).
    maybe_none: bool = False

    def attr(self, name: str) -> Optional[Value]:
        if name in self.changed or "*" in self.changed:
            return UNKNOWN
        for key, val in self.attrs:
            if key == name:
                if f"{name}:call" in self.changed and not isinstance(val, ModuleVal):
                    return UNKNOWN  # a method of it ran: `self.memory.push(x)` changed what it holds
                if f"{name}:mode" in self.changed and isinstance(val, ModuleVal) and val.eval_at is not None:
                    # `.train()` may have run: not known to be in eval mode.
                    return replace(val, eval_at=None, eval_sure=False)
                if f"{name}:data" in self.changed and isinstance(val, TensorVal) and val.shape is not None:
                    return replace(val, shape=None)  # `self.x.data = ...` may have changed its shape, nothing else
                return val
        return None

    def join(self, other: Value) -> Value:
        if isinstance(other, PyVal) and other.is_none:
            return self if self.maybe_none else replace(self, maybe_none=True)
        if not isinstance(other, ObjectVal) or other.cls is not self.cls:
            return UNKNOWN
        if self == other:
            return self
        mine, theirs = dict(self.attrs), dict(other.attrs)
        attrs = tuple((k, mine[k].join(theirs[k])) for k in sorted(mine.keys() & theirs.keys()))
        return ObjectVal(self.cls, attrs, _first(self.origin, other.origin), self.changed | other.changed,
                         self.maybe_none or other.maybe_none)

    def __hash__(self) -> int:
        return _cached_hash(self)


@dataclass(frozen=True)
class ParamsVal(Value):
    """`model.parameters()`: leaf tensors that require grad."""

    origin: Optional[Fact] = None
    owner: Optional[str] = None  # reference key of the module, e.g. "model"
    module_sites: frozenset = frozenset()  # where those modules were created (see `TensorVal.psaved`)
    evidence: bool = False  # the parameters of an object gradsight cannot see: they require grad by evidence of use
    frozen: bool = False  # of a module frozen by `requires_grad_(False)` (an EMA copy): they do not require grad
    # of an unseen object, paired by `zip` with another model's (an EMA or target update): that they require grad
    # is not known (see `call_builtin`)
    weak: bool = False

    def join(self, other: Value) -> Value:
        if self == other:
            return self
        # `self.params = list(mac.parameters())`, grown on one branch only by a known module's parameters
        # (`if args.mixer: self.params += list(self.mixer.parameters())`): still `mac`'s parameters, plus maybe others.
        if isinstance(other, ParamsVal) and (self.owner, self.evidence, self.frozen, self.weak) == \
                (other.owner, other.evidence, other.frozen, other.weak):
            return replace(self, module_sites=self.module_sites | other.module_sites)
        return UNKNOWN


@dataclass(frozen=True)
class OptimizerVal(Value):
    origin: Optional[Fact] = None
    owner: Optional[str] = None  # module whose parameters() it took
    module_sites: frozenset = frozenset()  # where the modules whose parameters it took were created


@dataclass(frozen=True)
class DistVal(Value):
    """A `torch.distributions` object (`Normal(mu, std)`, `Categorical(logits=...)`): what `log_prob`, `rsample`,
    `entropy` and its properties return has the history of the tensors it was built from; `sample()` has none."""

    cls: str = ""
    params: tuple = ()  # the TensorVal (or UNKNOWN) of every tensor it was built from, wrapped distributions' too
    origin: Optional[Fact] = None

    def join(self, other: Value) -> Value:
        if self == other:
            return self
        if isinstance(other, DistVal) and len(other.params) == len(self.params):
            return DistVal(self.cls if self.cls == other.cls else "Distribution",
                           tuple(a.join(b) for a, b in zip(self.params, other.params)), self.origin)
        return UNKNOWN


@dataclass(frozen=True)
class SeqVal(Value):
    """A tuple or list literal whose items we know (for unpacking and optimizer arguments)."""

    items: tuple = ()
    homog: bool = False  # a list of unknown length (a comprehension): every element is like `items[0]`

    def join(self, other: Value) -> Value:
        if self is other:
            return self
        if isinstance(other, SeqVal) and len(other.items) == len(self.items) and other.homog == self.homog:
            return SeqVal(tuple(a.join(b) for a, b in zip(self.items, other.items)), self.homog)
        if isinstance(other, SeqVal) and (self.homog or other.homog):
            # A list that grew (`xs.append(v)` in a loop) joined with what it was (`[]` at the loop's entry): one
            # element standing for all of them.
            return summarise(self.items + other.items)
        return UNKNOWN


@dataclass(frozen=True)
class MapVal(Value):
    """A dict whose every value is an instance of one plain class of the analysed code, made by a comprehension or
    by `dict`/`OrderedDict` of one (`meters = {k: AverageMeter(k) for k in names}`): `d[k]` at any key is that object
    (the join of what it may be). Only objects: tensors in dicts stay tracked per constant key (docs/heap.md). A
    store into it or a method that changes it (`update`, `pop`, ...) makes it unknown."""

    item: Value = None  # an ObjectVal

    def join(self, other: Value) -> Value:
        if self is other or self == other:
            return self
        if isinstance(other, MapVal):
            item = self.item.join(other.item)
            return MapVal(item) if isinstance(item, ObjectVal) else UNKNOWN
        return UNKNOWN


def map_of_pairs(pairs: Value) -> Optional[MapVal]:
    """The dict `dict(pairs)` / `OrderedDict(pairs)` makes, where `pairs` is a comprehension of `(key, object)` pairs
    or a dict of objects already: a `MapVal`; None otherwise."""
    if isinstance(pairs, MapVal):
        return pairs
    if not isinstance(pairs, SeqVal) or not pairs.items:
        return None
    values = []
    for pair in pairs.items:  # one summarised pair, or the pairs of a literal (or unrolled) list
        if not (isinstance(pair, SeqVal) and not pair.homog and len(pair.items) == 2):
            return None
        values.append(pair.items[1])
    item = join_all(values)
    return MapVal(item) if isinstance(item, ObjectVal) else None


def _joined_seg(a: "TensorVal", b: "TensorVal") -> Optional[tuple]:
    """The `saved_seg` of a join: the one saving path's segment, or the shared one; None when two paths saved at
    different sites (no one segment says whether the save is still live)."""
    if a.saved is None:
        return b.saved_seg
    if b.saved is None or a.saved_seg == b.saved_seg:
        return a.saved_seg
    return None


def frozen_layers(mod: ModuleVal, layers: tuple) -> tuple:
    """The children a Sequential runs: frozen with it where it is frozen (`seq.requires_grad_(False)`, a loop setting
    every parameter's `requires_grad = False` or detaching it in place), since that reached every child's
    parameters; the children keep their own state otherwise."""
    if mod.has_params is not Tri.NO:
        return layers
    return tuple(replace(l, has_params=Tri.NO) if isinstance(l, ModuleVal) and l.has_params is not Tri.NO else l
                 for l in layers)



def join_all(values) -> Value:
    """The join of a non-empty sequence of values."""
    out = values[0]
    for v in values[1:]:
        out = out.join(v)
    return out


def summarise(items: tuple) -> SeqVal:
    """A list of unknown length whose every element is like the join of `items` (a list that grew in a loop)."""
    return SeqVal((join_all(items),), True) if items else SeqVal((), True)


def carries_graph(value: Value) -> bool:
    """A tensor that may require grad, or a sequence holding one (what a call gradsight cannot see might keep).
    UNKNOWN does not count: nothing says it holds a graph."""
    if isinstance(value, TensorVal):
        return value.rg is not Tri.NO
    if isinstance(value, SeqVal):
        return any(carries_graph(v) for v in value.items)
    return False


def graph_free(value: Value) -> bool:
    """Surely holds no autograd graph: plain data, `None`, a tensor that does not require grad, a module or a
    function, or a sequence of those. UNKNOWN is not graph-free: unlike `carries_graph`, this one must be sure."""
    if isinstance(value, TensorVal):
        return value.rg is Tri.NO
    if isinstance(value, SeqVal):
        return all(graph_free(v) for v in value.items)
    return isinstance(value, (PyVal, ModuleVal, FuncVal))


@dataclass(frozen=True)
class FuncVal(Value):
    node: Any  # ast.FunctionDef
    owner: Any = None  # ClassInfo for methods
    module: Any = None  # ModuleScope it was defined in
    key: str = ""

    def __hash__(self) -> int:
        return hash(("func", self.key, id(self.node)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FuncVal) and other.node is self.node


@dataclass(frozen=True)
class BoundMethod(Value):
    func: FuncVal
    self_val: Value


@dataclass(frozen=True)
class ClassVal(Value):
    info: Any  # ClassInfo

    def __hash__(self) -> int:
        return hash(("class", id(self.info)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClassVal) and other.info is self.info


@dataclass(frozen=True)
class GradModeCtx(Value):
    """`torch.no_grad()`, `torch.enable_grad()`, `torch.inference_mode(...)`, `torch.set_grad_enabled(flag)`."""

    enabled: Tri
    inference: bool
    label: str
    # `torch.set_grad_enabled(flag)`: also a plain call that changes the mode from its statement on.
    sets_mode: bool = False


@dataclass
class ClassInfo:
    name: str
    node: Any
    bases: tuple = ()
    is_module: bool = False
    methods: dict = field(default_factory=dict)
    module: Any = None

    def __hash__(self) -> int:
        return id(self)


def join_values(a: Optional[Value], b: Optional[Value]) -> Optional[Value]:
    if a is None:
        return b
    if b is None:
        return a
    return a.join(b)


# In `Interpreter.reached_sources`: a backward ran on a value gradsight cannot follow back (a model or loss it does
# not see, or a tensor an unknown value fed: `psrc_partial`), so any tensor or module may have been reached by it
# and no "requires grad, but every path to a backward is cut" claim (GS202) holds for the file.
UNKNOWN_REACH = ("<a backward of a value gradsight cannot follow back>",)


class ParamCut(tuple):
    """A key of `Interpreter.grad_leaves` for module parameters cut off from a loss:
    (path, line, column of the cut, module site). It is "reached" (in `reached_sources`) by the
    `ParamReach` of its module, whichever cut it names: a module reached by any backward is not dead."""

    def __hash__(self) -> int:
        return hash(("params", self[3]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ParamReach):
            return other[1] == self[3]
        return tuple.__eq__(self, other)


class ParamReach(tuple):
    """("params", module site): a backward reached this module's parameters without a cut."""

    def __hash__(self) -> int:
        return hash(("params", self[1]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ParamCut):
            return other[3] == self[1]
        return tuple.__eq__(self, other)


# Keys of `Interpreter.optimized_modules` beside the optimizers' owners (reference keys, `str`).
# Frozen dataclasses, not tuples: keys of different kinds never compare equal (a `Trained(site)` is not a
# `NameOf(site)`), and none equals a reference key (a `str`).
@dataclass(frozen=True)
class Trained:
    """Key of `optimized_modules`: an optimizer took the parameters of the module made at `site`."""
    site: Any


@dataclass(frozen=True)
class ParentOf:
    """Key of `optimized_modules`: the module made at `sub` ran inside the module made at `parent`."""
    sub: Any
    parent: Any


@dataclass(frozen=True)
class NameOf:
    """Key of `optimized_modules`: how the code names the module made at `site` (its value)."""
    site: Any


_TENSOR_FIELDS = tuple(f.name for f in fields(TensorVal))

for _cls in (Fact, TensorVal, PyVal, ModuleVal, ObjectVal, ParamsVal, OptimizerVal, SeqVal):
    _fast_frozen(_cls)
