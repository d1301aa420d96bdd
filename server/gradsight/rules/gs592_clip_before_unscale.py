"""GS592: gradient clipping between `scaler.scale(loss).backward()` and `scaler.step(opt)` without `unscale_`."""

from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_CLIP_WORDS = frozenset({"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"})
_CLIPS = frozenset({
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad_norm",
    "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm",
})


def _scaled_backward_receiver(call: ast.Call) -> Optional[ast.AST]:
    """`X.scale(loss).backward()` -> `X`."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "backward"):
        return None
    inner = f.value
    if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "scale"
            and len(inner.args) == 1):
        return inner.func.value
    return None


def _method_receiver(call: ast.Call, name: str) -> Optional[ast.AST]:
    f = call.func
    return f.value if isinstance(f, ast.Attribute) and f.attr == name else None


def _candidates(top) -> list:
    """A top-level statement's scaled backwards, clip calls, `unscale_` and `step` calls, by spelling alone."""
    out = []
    for call in top.calls:
        f = call.func
        word = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if word in _CLIP_WORDS or word in ("unscale_", "step", "update") or _scaled_backward_receiver(call) is not None:
            out.append(call)
    return out


class ClipBeforeUnscale(Rule):
    code = "GS592"
    name = "clip-before-unscale"
    severity = Severity.WARNING
    summary = ("Gradient clipping between `scaler.scale(loss).backward()` and `scaler.step(opt)` without "
               "`scaler.unscale_(opt)` clips the scaled gradients.")
    events = (FileEvent,)
    what_it_does = ("Flags `torch.nn.utils.clip_grad_norm_` (or `clip_grad_value_`) that runs after "
                    "`scaler.scale(loss).backward()` and before `scaler.step(optimizer)` of the same scaler, with "
                    "no `scaler.unscale_(...)` between the backward and the clip.")
    why_bad = ("With a `GradScaler` the backward runs on `loss * scale` (65536 at the start), so every `.grad` "
               "holds `scale` times the true gradient until `scaler.unscale_(optimizer)` divides it back, which "
               "`scaler.step` does on its own only after the clip. Clipping in between compares the scaled norm "
               "with the threshold: the clip nearly always fires and shrinks the real gradients by up to the "
               "loss scale (or, for `clip_grad_value_`, clamps them at `threshold / scale`). Training silently "
               "takes far smaller steps than intended. The AMP recipe unscales first: "
               "\"If you wish to modify or inspect the parameters' .grad attributes between backward() and "
               "scaler.step(optimizer), you should unscale them first.\"")
    example = ("scaler.scale(loss).backward()\n"
               "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
               "scaler.step(optimizer)\nscaler.update()")
    use_instead = ("scaler.scale(loss).backward()\nscaler.unscale_(optimizer)\n"
                   "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
                   "scaler.step(optimizer)\nscaler.update()")
    fix_safety = "There is no automatic fix: call `scaler.unscale_(optimizer)` before the clip."
    references = ("https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping",)

    _HEAD = ("import torch\nmodel = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=1.0)\n"
             "scaler = torch.amp.GradScaler('cpu', init_scale=1024.0)\nw0 = model.weight.detach().clone()\n"
             "loss = model(torch.ones(2, 4)).sum() * 0.01\n")
    valid = (
        Valid(_HEAD + "scaler.scale(loss).backward()\nscaler.unscale_(opt)\n"
              "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\nscaler.step(opt)\nscaler.update()\n"),
        # Without a scaler the gradients are the true ones.
        Valid(_HEAD + "loss.backward()\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\nopt.step()\n"),
        # The clip on the non-AMP branch follows an unscaled backward.
        Valid(_HEAD + "use_amp = False\nif use_amp:\n    scaler.scale(loss).backward()\n    scaler.step(opt)\n"
              "    scaler.update()\nelse:\n    loss.backward()\n"
              "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    opt.step()\n"),
        Valid(_HEAD + "def update(scaler, opt):\n    scaler.unscale_(opt)\n"
              "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    scaler.step(opt)\n    scaler.update()\n\n\n"
              "scaler.scale(loss).backward()\nupdate(scaler, opt)\n"),
        # Clipping after the step is a different (harmless) thing.
        Valid(_HEAD + "scaler.scale(loss).backward()\nscaler.step(opt)\nscaler.update()\n"
              "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"),
    )
    invalid = (
        Invalid(_HEAD + "scaler.scale(loss).backward()\ntorch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
                "scaler.step(opt)\nscaler.update()\n",
                line=8, runtime="silent: (w0 - model.weight).abs().max().item() < 0.002"),
        Invalid(_HEAD + "from torch.nn.utils import clip_grad_value_\nclip = 1.0\nscaler.scale(loss).backward()\n"
                "if clip > 0:\n    clip_grad_value_(model.parameters(), clip)\nscaler.step(opt)\nscaler.update()\n",
                line=11, runtime="silent: (w0 - model.weight).abs().max().item() < 0.002"),
        # The backward ran in the caller; `update` clips and steps.
        Invalid(_HEAD + "def update(scaler, opt):\n    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
                "    scaler.step(opt)\n    scaler.update()\n\n\nscaler.scale(loss).backward()\nupdate(scaler, opt)\n",
                line=8, runtime="silent: (w0 - model.weight).abs().max().item() < 0.002"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "step" not in q.attrs or ("scale" not in q.attrs and "update" not in q.attrs):
            return
        calls = q.surveyed("GS592.calls", _candidates)
        clips = [c for c in calls if q.call_name(c) in _CLIPS]
        for clip in clips:
            self._check_clip(q, report, clip, calls)

    def _check_clip(self, q, report, clip: ast.Call, calls: list) -> None:
        fn = q.enclosing_function(clip)
        pos = (clip.lineno, clip.col_offset)
        own = sorted((c for c in calls if q.enclosing_function(c) is fn), key=lambda c: (c.lineno, c.col_offset))
        for step in own:
            recv = _method_receiver(step, "step")
            if recv is None or (step.lineno, step.col_offset) <= pos or not step.args or not _in_sequence(q, clip, step):
                continue
            key = ast.dump(recv)
            # The scaled backward of the same scaler before the clip, on the same path (None: before this function).
            bwd = None
            for c in own:
                r = _scaled_backward_receiver(c)
                if (r is not None and ast.dump(r) == key and (c.lineno, c.col_offset) < pos
                        and _in_sequence(q, c, clip)):
                    bwd = c
            # Without a scaled backward here, `X.step(opt)` followed by `X.update()` says that `X` is a GradScaler
            # (and the backward ran in a caller). A scaled backward after the clip is another mistake (a clip before
            # the backward), not this one.
            if bwd is None and any((r := _scaled_backward_receiver(c)) is not None and ast.dump(r) == key for c in own):
                continue
            if bwd is None and not any((u := _method_receiver(c, "update")) is not None and ast.dump(u) == key
                                       and (c.lineno, c.col_offset) > (step.lineno, step.col_offset) for c in own):
                continue
            start = (bwd.lineno, bwd.col_offset) if bwd is not None else (0, 0)
            if any((u := _method_receiver(c, "unscale_")) is not None and ast.dump(u) == key
                   and start < (c.lineno, c.col_offset) < pos for c in own):
                return
            shown = ast.unparse(recv)
            related = [Note(step.lineno, step.col_offset + 1, f"`{shown}.step` unscales only here")]
            if bwd is not None:
                related.insert(0, Note(bwd.lineno, bwd.col_offset + 1, "the backward of the scaled loss"))
            report.add(self, clip,
                       "This clips gradients the GradScaler still scales, so the threshold acts on scaled values. "
                       f"Call `{shown}.unscale_(optimizer)` before the clip.", related=related)
            return


def _in_sequence(q, first: ast.AST, second: ast.AST) -> bool:
    """Whether `second` can run after `first` on one path: not in another branch of the same `if`/`try`."""
    chain_a = q.ancestors(first)
    chain_b = q.ancestors(second)
    ids_b = {id(n): i for i, n in enumerate(chain_b)}
    for i, node in enumerate(chain_a):
        j = ids_b.get(id(node))
        if j is None:
            continue
        if i == 0 or j == 0:
            return True
        child_a, child_b = chain_a[i - 1], chain_b[j - 1]
        for field in ("body", "orelse", "handlers", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            in_a = any(s is child_a for s in block)
            in_b = any(s is child_b for s in block)
            if in_a != in_b and isinstance(node, (ast.If, ast.Try)):
                return False
        return True
    return True
