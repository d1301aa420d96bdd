"""The words of the engine's facts: one template per fact kind.

A `values.Fact` is data: a kind (a key of `FACT_WORDS`) and structured arguments (the expression as written,
the op, a name). Its `text` is made from this table only when something shows it (a hover, a related note, a
rule's message), and no decision reads it: code that needs to know what a step was reads `kind` and `arg()`.
Templates use `str.format` fields named like the arguments.
"""

from __future__ import annotations

# Kinds decisions read (also exported from `values`).
CREATED_WITHOUT_GRAD = "created-without-grad"  # a factory call without requires_grad=True
GRAD_MODE_OFF = "grad-mode-off"  # computed while grad mode was disabled
ONLY_FROM_NO_GRAD = "only-from-no-grad"  # computed only from tensors that do not require grad
MADE_LEAF_REQUIRE_GRAD = "made-leaf-require-grad"  # `x.requires_grad_()` on a leaf
USE = "use"  # an expression used again (its text is the reference itself: `expr`)
MAYBE_SAME_LEAF = "maybe-same-leaf"  # `.to()`/`.float()`/`.cpu()` of a leaf that requires grad: itself when a no-op

FACT_WORDS: dict[str, str] = {
    # where a value comes from
    "expr": "`{expr}`",
    USE: "{expr}",
    "from": "from `{expr}`",
    "parameter": "parameter `{expr}`",
    "parameters-of": "parameters of `{expr}`",
    "created-by": "created by `{label}`",
    "created-by-requires-grad": "created by `{label}` with requires_grad=True",
    "created-here": "{label} were created here",
    "added-into-object": "`{name}` is added into the object here",
    "loaded-model": "a model loaded by `{expr}`",
    "module-by-use": "`{expr}` is a module: `.eval()` was called on it",
    "made-require-grad": "`{expr}` made it require grad",
    "library-class": "`{expr}` is a `{qualname}`",
    "runs-trained-model": "`{expr}` runs `{model}`, whose parameters an optimizer trains",
    "backwarded": "`{expr}` is backwarded, so it has a graph",
    "evaluation-function": "`{name}` is named as evaluation code",
    "gives-backwarded-loss": "`{expr}` gives what `{method}` backwards, so it has a graph",
    "loss-input": "`{name}` is the prediction `{cls}.forward` is given, so it has a graph",
    "inference-bracket": "`{expr}` is the prediction of a loss the function computes after leaving its own "
                         "`torch.inference_mode()` block, so it is taken to require grad",
    "grad-tested": "the function tests `{name}.requires_grad` further on, so it is called with a graph",
    "out-of-place-twin": "`{name}` is the out-of-place twin of an in-place `{name}`, kept for autograd, so its tensors "
                         "are taken to require grad",
    "feeds-backwarded": "`{expr}` feeds `{loss}`, which is backwarded, so it has a graph",
    "grad-attribute": "a `.grad`",
    "distribution": "the distribution `{expr}`",
    "log-prob": "the log-probability `{expr}`",
    "advantage": "the advantage `{expr}`",
    "advantage-of-network": "the advantage `{expr}`",
    "view": "a view made by `{expr}`",
    "custom-function-view": "`{expr}` returns its input `{name}` as-is from the custom Function `{cls}`, a view",
    MAYBE_SAME_LEAF: "`{expr}` is the leaf itself when it changes nothing (same device and dtype), else a copy",
    "grad-with-create-graph": "a gradient computed with create_graph=True",
    # optimizers and modules
    "optimizer": "optimizer `{op}`",
    "optimizer-took": "`{op}` took the parameters of `{owner}`",
    "optimizer-trains": "`{op}` trains the parameters of `{model}`",
    "eval-mode": "`{expr}` switched to evaluation mode",
    "stepped-params-of": "`{expr}` updated the parameters of `{owner}` in place",
    "stepped-params": "`{expr}` updated its parameters in place",
    "kept-on-object": "`{expr}` keeps this graph on the object",
    # why a value has no gradient
    CREATED_WITHOUT_GRAD: "`{expr}` was created without requires_grad=True",
    GRAD_MODE_OFF: "computed while grad mode was disabled",
    ONLY_FROM_NO_GRAD: "computed only from tensors that do not require grad",
    MADE_LEAF_REQUIRE_GRAD: "`{expr}` made a leaf that requires grad",
    "data": "`.data` returns the values without autograd history",
    "sampled": "`{expr}` draws a sample without gradient (`sample()` runs under no_grad; `rsample()` keeps it)",
    "comparison": "a comparison gives a boolean tensor with no gradient",
    "detached-by": "detached by `{expr}`",
    "detached-in-place": "detached in place by `.detach_()`",
    "requires-grad-false-call": "requires_grad_(False)",
    "requires-grad-attribute": "`requires_grad = {flag}`",
    "not-differentiable": "`{op}` is not differentiable: its result has no gradient",
    "int-cast": "`{expr}` casts to an integer or bool dtype, which has no gradient",
    "inference-mode-op": "`{op}` ran under `torch.inference_mode()`: its result is an inference tensor, with no gradient",
    "zero-gradient": "`{op}` has a zero gradient everywhere",
    "grad-without-create-graph": "`torch.autograd.grad` without create_graph=True returns gradients with no history",
    "copied-to-numpy": "`{expr}` copied the values into NumPy",
    "converted-to-numpy": "`{expr}` converted the tensor to NumPy",
    "to-python-number": "`{fn}()` turned `{expr}` into a Python number",
    "cut-method": "`.{method}()` turned the tensor into {what}",
    "cut-method-of": "`.{method}()` turned `{expr}` into {what}",
    "copied-without-history": "`torch.{fn}({expr})` copies the values without their history",
    "rebuilt-from-cut": "rebuilt by `torch.{fn}()` from values that left autograd",
    # grad mode
    "grad-mode-set": "grad mode set by `{label}`",
    "grad-mode-enabled": "grad mode enabled by `{label}`",
    "grad-mode-disabled": "grad mode disabled by `{label}`",
    "no-grad-decorator": "grad mode disabled by the `@{expr}` decorator",
    # saved tensors and freed graphs
    "saved-by": "saved for backward by `{op}`",
    "saved-in-call": "saved for backward by `{op}` inside `{call}`",
    "storage-saved": "`{expr}`, which shares its storage, was saved for backward by `{op}`",
    "view-saved": "`{expr}`, a view of it, was saved for backward by `{op}`",
    "freed": "`{expr}` freed the graph's saved tensors",
    "carries-previous": "`{expr}` carries the previous iteration's graph into this step",
    "bound-before-loop": "`{expr}` is computed once, before the loop",
}


def render(kind: str, args: tuple) -> str:
    """The words for a fact of `kind` with `args` ((name, value) pairs)."""
    template = FACT_WORDS.get(kind)
    if template is None:
        return kind
    try:
        return template.format(**dict(args)) if args else template.format()
    except (KeyError, IndexError, ValueError):  # never let a display fail: `tests/test_fact_words.py` guards this
        return f"{kind} " + ", ".join(f"{k}={v}" for k, v in args)
