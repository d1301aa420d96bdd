"""Events: the moments the interpreter hands to rules, with the abstract state that matters.

The interpreter emits events only on its reporting pass (after loops reached their fixpoint), so a
rule sees each program point once, with the state that holds on every iteration.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from .values import Fact, ModuleVal, TensorVal, Tri


@dataclass(frozen=True)
class Event:
    node: ast.AST  # where a finding would stand


@dataclass(frozen=True)
class BackwardEvent(Event):
    target: TensorVal
    expr: str  # source text of the tensor backward was called on
    api: str  # "Tensor.backward" | "torch.autograd.backward" | "torch.autograd.grad"
    call: ast.Call
    gradient_given: bool
    retain_graph: Tri
    grad_mode: Tri = Tri.YES
    target_node: Optional[ast.AST] = None
    inputs: tuple = ()  # torch.autograd.grad inputs: ((expr node, Value), ...)
    create_graph: Tri = Tri.NO
    allow_unused: Tri = Tri.NO
    gradient: Optional[tuple] = None  # (expr node, Value) of `gradient=` / `grad_outputs=` / `grad_tensors=`
    # Grad mode is off only through a call made with it off, and the backward runs only under a test the analysis
    # cannot decide in that call or deeper (`Interpreter.backward_guarded_off`).
    guarded_off: bool = False


@dataclass(frozen=True)
class FreedElsewhereEvent(Event):
    """A backward in another workspace file's code, in an inherited method run on an instance of this file's class
    (`inherited.py`), through a graph that a backward of this file's code already freed (`target.freed`). `node`: the
    class; `at`: that backward (its path is the other file's); `method`: the inherited method's name."""

    target: TensorVal
    at: Fact
    method: str


@dataclass(frozen=True)
class NoneBackwardedEvent(Event):
    """A method of this file's class that never returns a value (`node`, its `def`) overrides one whose result an
    inherited method (`inherited`, in a base class of this file or another workspace file) backwards: `at` is that
    `.backward()` call (its path the other file's); `method` the override's name (`inherited.py`)."""

    at: Fact
    inherited: str
    method: str


@dataclass(frozen=True)
class NoopDetachEvent(Event):
    """A method of this file's class that does nothing (`node`, its `def`) overriding a base class's method of the same
    name (`method`) that detaches the object's tensors (`base`: that method, its path the other file's where it is
    in one), on a class that stores computed values on its instances (`inherited.py`)."""

    base: Fact
    method: str


@dataclass(frozen=True)
class SiblingStopsEvent(Event):
    """A method of this file's class returns (`node`, the `return`) the output of a module attribute `attr` whose
    parameters the class family hands on, with its graph, where every other implementation of the method (`count`
    of them; `other`: the first, its path the other file's where it is in one) stops the gradient on every return,
    and `caller`, a method of the family, calls it on `self` in grad mode and backwards (`sibling_contract.py`)."""

    method: str
    attr: str
    other: Fact
    count: int
    caller: str


@dataclass(frozen=True)
class CarryEvent(Event):
    """A loop-carried tensor whose graph a backward later in the same loop frees, fed into this step's graph."""

    value: TensorVal
    expr: str
    arg: ast.AST  # the argument expression carrying the stale graph
    is_tuple: bool = False  # the argument is a tuple of tensors, e.g. an LSTM's (h, c)
    # Where the argument is made anew each iteration, the one tensor bound before the loop (and never in it) that
    # holds the freed graph, as a fact at its binding statement (`beg_embedding = net.emb(tok)`): what to move.
    source: Optional[Fact] = None


@dataclass(frozen=True)
class InplaceEvent(Event):
    target: TensorVal
    expr: str  # the tensor being modified
    op: str  # "mul_", "__imul__", "__setitem__", "ReLU(inplace=True)", ...
    grad_mode: Tri
    stmt: Optional[ast.AST] = None  # the statement, for rewriting fixes
    module: Optional[ModuleVal] = None  # the in-place module (nn.ReLU(inplace=True)) when that is the cause
    via_call: Optional[Fact] = None  # call site when this happens inside a helper


@dataclass(frozen=True)
class NumpyEvent(Event):
    target: TensorVal
    expr: str
    api: str  # "Tensor.numpy" | "numpy.array" ...
    insert_at: Optional[ast.AST] = None  # the receiver expression, `.detach()` goes after it


@dataclass(frozen=True)
class TensorHookEvent(Event):
    """`t.register_hook(fn)`: torch raises unless `t` requires grad (GS432)."""
    target: TensorVal
    expr: str


@dataclass(frozen=True)
class OptimizerEvent(Event):
    params: tuple  # ((ast expr, TensorVal), ...)
    optimizer: str


@dataclass(frozen=True)
class AccumulateEvent(Event):
    target_expr: str
    value: TensorVal
    value_node: ast.AST
    backward_in_loop: Optional[int]  # line of a backward inside the same loop (per_call: in the same method)
    # "+=" | "append" | "store" | "keeps" | "carry" (`h = cell(x, h)`: a state fed back into the next step) | "write"
    # (`buf[i] = v` into a tensor: the buffer's history chains every write)
    how: str
    per_call: bool = False  # into an attribute of `self` in a method that calls backward, outside loops
    # For a method call that keeps its argument (`meter.update(loss)`): the statement in the method that adds it
    # into `self` (its `path` set when the method is in another file, where the fix then goes).
    kept_at: Optional[Fact] = None
    # Inside a method of an `nn.Module` (its `self` is a module): a `forward` collecting per-step outputs into a
    # list is how models are written, and the backward through the module's output needs those graphs.
    in_module: bool = False
    # In a loop without backward: where the module producing the value was put in eval mode (`model.eval()`).
    eval_at: Optional[Fact] = None
    # In a loop without backward, in a function that never backwards, hands no graph to code gradsight cannot see
    # and returns or leaves none (every graph it builds dies with its locals): what the loop keeps is kept for
    # nothing, and it grows with the iterations (a generation loop feeding its state back, a validation total).
    dropped: bool = False


@dataclass(frozen=True)
class DeadGradEvent(Event):
    """A leaf created with requires_grad=True whose gradient can never arrive: every path to the loss is cut."""

    name: str
    created: Fact
    cuts: tuple = field(default=())  # Facts of the cuts


@dataclass(frozen=True)
class GradReadEvent(Event):
    target: TensorVal
    expr: str


@dataclass(frozen=True)
class GraphCutEvent(Event):
    """A call that silently copies a tensor's values without its history (`torch.tensor(t)`)."""

    target: TensorVal
    expr: str
    api: str


@dataclass(frozen=True)
class InferenceSaveEvent(Event):
    """An op that must save an inference-mode tensor for backward."""

    target: TensorVal
    expr: str
    op: str
    # The prediction whose grad state is taken from use (`interp_ops.inference_target`); None: an input surely
    # requires grad.
    evidence: Optional[Fact] = None
    raises: Optional[ast.AST] = None  # with `evidence`: the loss that raises (`node` is the inference-mode bracket)


@dataclass(frozen=True)
class FactoryEvent(Event):
    """A tensor made to require grad: a factory with requires_grad=..., `requires_grad_()`, or
    assignment to `.requires_grad` (or a misspelling of it)."""

    target: TensorVal  # the tensor's state before the change
    api: str  # "factory" | "requires_grad_" | "attr:requires_grad" | "attr:<typo>"
    flag: Tri
    grad_mode: Tri = Tri.YES
    inference_mode: bool = False


@dataclass(frozen=True)
class ViewInplaceEvent(Event):
    """An in-place op or `detach_()` on a view with special autograd restrictions."""

    target: TensorVal
    expr: str
    op: str
    grad_mode: Tri


@dataclass(frozen=True)
class OutArgEvent(Event):
    op: str
    grad_inputs: tuple  # expressions that require grad
    grad_mode: Tri


@dataclass(frozen=True)
class LoopEvent(Event):
    """A loop, once, on the reporting pass (training-loop checks). `receivers`: the names the loop calls methods on
    that are bound to an object of a known class, as (name, the attribute names stored on it, (method name, `def`
    node) of its class and bases, also bases in other files found through the workspace, whether the class has a
    base gradsight cannot see): `self.model(x)` calls a stored value, `self.mart_loss(x, y)` a base class's method."""

    in_function: Optional[ast.AST] = None
    receivers: tuple = ()


@dataclass(frozen=True)
class LossTargetEvent(Event):
    """A loss with a target (`F.mse_loss(pred, target)`, `nn.SmoothL1Loss()(pred, target)`) called in grad mode
    on a prediction whose graph runs through a module an optimizer trains, and a target whose graph runs through
    a module no optimizer in view trains and the prediction does not go through (a target network, a teacher).
    `untrained`: (module site, the code's name for it or None) of those modules; `target_origin`: where the
    target came from."""

    op: str
    target_expr: str
    target_node: ast.AST
    untrained: tuple
    target_origin: Optional[Fact] = None


@dataclass(frozen=True)
class AdvantageGraphEvent(Event):
    """A log-probability from a `torch.distributions` object (or a ratio of them) multiplied, in grad mode, by an
    advantage-shaped value (`returns - values`) whose graph runs through modules an optimizer trains, or through a
    module the log-probability's graph runs through too (an actor-critic with a shared body): the policy-gradient
    term also differentiates the critic. `advantage`: the subtraction (where `.detach()` goes);
    `log_prob`: where the log-probability was made; `shared`: (module site, the code's name or None) of the trained
    modules the advantage's graph runs through."""

    advantage: Fact
    log_prob: Fact
    shared: tuple


@dataclass(frozen=True)
class BootstrapTargetEvent(Event):
    """A loss with a target called in grad mode where the target is bootstrapped (`r + gamma * v`, the scaled term
    with a graph) and that graph runs through a module whose parameters an optimizer trains and the prediction's
    graph runs through too: the TD target of DQN or SARSA built from the online network itself. `shared`: (module
    site, the code's name for it or None) of those modules; `value_origin`: where the scaled term's tensor was
    made (the value to compute without gradient)."""

    op: str
    target_expr: str
    target_node: ast.AST
    shared: tuple
    value_origin: Fact


@dataclass(frozen=True)
class ModuleCallEvent(Event):
    """A call of a module in eval mode while grad mode is on (GS103)."""

    expr: str
    result: TensorVal
    eval_at: Optional[Fact] = None


@dataclass(frozen=True)
class GradModeEvent(Event):
    """A `with torch.no_grad()` (or inference_mode) entered while grad mode was already off."""

    label: str
    outer: Optional[Fact] = None


@dataclass(frozen=True)
class ReassignEvent(Event):
    """`key = value` replacing a tracked value: parameter updates outside no_grad, modules replaced after
    an optimizer took their parameters."""

    key: str
    old: object
    new: object
    reads_grad: bool = False
    optimizer_at: Optional[Fact] = None
    # For a rebinding that reads `key.grad`: what runs next with `key` (in execution order, wrapping around
    # the enclosing loop): ("grad", Fact) for a read of `key.grad`, ("backward", Fact) for a backward call, ("reset", Fact) for
    # a statement that makes `key` require grad again (or rebinds it), ("loopvar", Fact) when `key` is the
    # enclosing `for` loop's own variable; None when nothing follows.
    next_use: Optional[tuple] = None
    grad_mode: Tri = Tri.YES


@dataclass(frozen=True)
class CheckpointEvent(Event):
    inputs: tuple  # TensorVals passed to the checkpointed function
    reentrant: Tri
    grad_mode: Tri


@dataclass(frozen=True)
class FuncGradEvent(Event):
    """`torch.func.grad(f)(...)` (or `grad_and_value`) of a function defined in the analysed code."""

    api: str
    func: str  # source text of the transformed function
    result: TensorVal  # what `f` returns for these arguments


@dataclass(frozen=True)
class ZeroGradEvent(Event):
    """`x.zero_grad()` between a backward and an optimizer step in the same block: it clears the gradients the
    backward computed before the step uses them. `node` is the zero_grad call."""

    backward: Fact
    step: Fact


@dataclass(frozen=True)
class DiscardEvent(Event):
    """An expression statement whose value is a new tensor made from a tensor by an out-of-place method
    (`p.grad.mul(-1)`, `x.detach()`, `x.masked_fill(m, 0)`): the result is thrown away and the receiver is
    unchanged. `node` is the call; `receiver` its receiver's value."""

    method: str
    receiver: TensorVal


@dataclass(frozen=True)
class SameTensorLossEvent(Event):
    """A distance loss (`mse_loss`, `l1_loss`, ... or their modules) whose two arguments are one tensor's memory: the
    same tensor under two names (`target = pred`, then `target[i] = r`), or a tensor and its `.detach()`. The loss is
    zero and so is every gradient. `node` is the call."""

    op: str
    pred_node: ast.AST
    target_node: ast.AST



@dataclass(frozen=True)
class StoreGraphEvent(Event):
    """In grad mode, a tensor with a graph is written in place into an attribute of `self` that held none
    (`self.queue[:, :bs] = z`, `self.sv.copy_(sv)`), or into one gradsight cannot see: the attribute now carries
    the graph, and every later write chains the next step's graph onto it. `node` is the write statement; `key`
    the attribute (`self.queue`); `value` what was written."""

    key: str
    op: str
    value: TensorVal
    known_before: bool  # the attribute's value before the write was known to have no graph


@dataclass(frozen=True)
class SelfStoreEvent(Event):
    """In grad mode, `self.x = v` in a module's `forward` where `v` surely carries a graph (`self.history =
    torch.cat((self.history[n:], outputs))`): the module keeps this call's graph for the next call. `node` is the
    assignment; `key` the attribute (`self.history`)."""

    key: str
    value: TensorVal


@dataclass(frozen=True)
class ModuleMethodOnTensorEvent(Event):
    """A method that only `nn.Module`s or optimizers have (`zero_grad`, `parameters`, `eval`, ...) called on a value
    gradsight knows to be a tensor (`x.zero_grad()`): `torch.Tensor` has no such attribute. `node` is the call."""

    method: str
    receiver: TensorVal
    expr: str  # the receiver as written


@dataclass(frozen=True)
class TensorIteratedEvent(Event):
    """`list(t)` / `tuple(t)` of a value gradsight knows to be a tensor: iterating a tensor unbinds it along its first
    dimension into views that share its storage (with an `UnbindBackward0` history where it requires grad). `node` is
    the call; `fn` the builtin's name; `expr` the tensor as written."""

    fn: str
    target: TensorVal
    expr: str
    grad_mode: Tri
