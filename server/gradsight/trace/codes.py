"""The trace codes (GS900-GS913): metadata and rule pages for the findings `gradsight trace` reports.

Static rules live in `gradsight.rules` and are classes with `check` methods; trace codes have no static
check, only documentation, so they are plain frozen dataclasses with the same documentation fields and the
same `docs_markdown()` layout (What it does / Why is this bad? / Example / Use instead / Fix safety /
References). The CLI lists them with `gradsight rules` and shows one with `gradsight rule GS902`.

This module must stay importable without torch and without the runner: the CLI and the language server
import it to describe codes, never to trace.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..findings import Severity

__all__ = ["TraceRule", "TRACE_RULES", "BY_CODE", "CONFIRMS", "trace_rule"]

FAMILY = "Runtime trace (confirmed by running the script)"
DOCS_BASE = "https://github.com/gradsight/gradsight/blob/main/docs/rules/"


@dataclass(frozen=True)
class TraceRule:
    code: str
    name: str  # kebab-case, as in the JSON output's "name"
    severity: Severity  # the usual severity; some findings of a code are milder (see what_it_does)
    summary: str  # one sentence
    what_it_does: str
    why_bad: str
    example: str
    use_instead: str
    fix_safety: str = "The trace offers no automatic fix for this code."
    references: tuple[str, ...] = ()
    confirms: tuple[str, ...] = ()  # static rule codes this trace code confirms when both stand on a line
    fix_available: bool = False  # findings of this code may carry a `fix` (always "unsafe")

    def family(self) -> str:
        return FAMILY

    def docs_url(self) -> str:
        return f"{DOCS_BASE}{self.code}.md"

    def can_fix(self) -> bool:
        return bool(self.fix_available)

    def docs_markdown(self) -> str:
        refs = "\n".join(f"- {r}" for r in self.references) or "- (none)"
        confirms = ""
        if self.confirms:
            confirms = "Confirms the static rule%s %s.\n\n" % (
                "s" if len(self.confirms) > 1 else "", ", ".join(f"[{c}]({c}.md)" for c in self.confirms))
        return (
            f"# {self.code} `{self.name}`\n\n"
            f"*{self.family()}* · default severity **{self.severity.value}** · "
            f"fix available: {'Yes (unsafe)' if self.can_fix() else 'No'}\n\n"
            f"{self.summary}\n\n"
            f"{confirms}"
            f"## What it does\n\n{self.what_it_does.strip()}\n\n"
            f"## Why is this bad?\n\n{self.why_bad.strip()}\n\n"
            f"## Example\n\n```python\n{self.example.strip()}\n```\n\n"
            f"## Use instead\n\n```python\n{self.use_instead.strip()}\n```\n\n"
            f"## Fix safety\n\n{self.fix_safety.strip()}\n\n"
            f"## References\n\n{refs}\n"
        )


_AUTOGRAD = "https://pytorch.org/docs/stable/notes/autograd.html"
_BACKWARD = "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html"
_ZERO_GRAD = "https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html"
_TRACE_DOC = "docs/trace.md (how `gradsight trace` runs a script)"

TRACE_RULES: tuple[TraceRule, ...] = (
    TraceRule(
        code="GS900", name="runtime-error", severity=Severity.ERROR,
        summary="The traced script raised an exception that no more specific trace code explains.",
        what_it_does=("Reports the script's uncaught exception at the innermost line of user code it passed "
                      "through, with the calling lines in `related`. For backward errors (a non-scalar root, "
                      "a shape mismatch) `related` names where the root was computed; for \"can't optimize a "
                      "non-leaf Tensor\", where the tensor stopped being a leaf."),
        why_bad="The script does not run to the end; the error is PyTorch's, placed where it can be fixed.",
        example="x = torch.randn(4, requires_grad=True)\ny = x * 2          # y has 4 elements\ny.backward()  # grad can be implicitly created only for scalar outputs",
        use_instead="x = torch.randn(4, requires_grad=True)\ny = (x * 2).sum()  # reduce to a scalar first\ny.backward()",
        references=(_BACKWARD, _TRACE_DOC),
        confirms=("GS403",),
    ),
    TraceRule(
        code="GS901", name="inplace-on-saved-tensor-confirmed", severity=Severity.ERROR,
        summary="An in-place write changed a tensor that an earlier op saved for backward.",
        what_it_does=("Reported at the in-place write itself (`x *= 2`, `x[0] = 1`, an `optimizer.step()` "
                      "between a forward and its backward), or, for a module built with `inplace=True` "
                      "(`nn.ReLU(inplace=True)`), where the module was built, with the op that saved the tensor "
                      "and the calling lines in `related`. A write through `.data`, which PyTorch never "
                      "detects, is reported as a warning."),
        why_bad=("PyTorch raises \"one of the variables needed for gradient computation has been modified "
                 "by an inplace operation\" at backward, far from the write; through `.data` there is no "
                 "error at all and the gradient is silently wrong."),
        example="h = torch.sigmoid(x @ w)   # sigmoid saves its output\nh += 1                    # overwrites it\nh.sum().backward()",
        use_instead="h = torch.sigmoid(x @ w)\nh = h + 1\nh.sum().backward()",
        fix_safety=("Making the op out-of-place is always correct; it costs one more tensor of memory. "
                    "Moving `optimizer.step()` after the backward changes the training order: check it."),
        references=(_AUTOGRAD + "#in-place-operations-with-autograd",),
        confirms=("GS301", "GS204"),
    ),
    TraceRule(
        code="GS902", name="backward-through-freed-graph-confirmed", severity=Severity.ERROR,
        summary="A backward ran through part of a graph that an earlier backward had already freed.",
        what_it_does=("Reported at the statement that let a tensor cross from the earlier backward's graph "
                      "into the new one: the carry of loop state (`out, h = rnn(x, h)`, or "
                      "`self.center = m * self.center + ...` inside a forward); where a tensor kept across "
                      "backward calls (a cache, a buffer never cleared) is computed; a backward run inside a "
                      "forward; for a tensor shared by two losses (a GAN's `fake`), the use that must detach, "
                      "chosen by the optimizer step between the two backward calls, or the failing backward "
                      "when no step ran in between; the second backward of the same loss. `related` names the "
                      "earlier backward (\"in the previous iteration\" when it is the same line), where the "
                      "tensor was produced, its uses and the failing backward."),
        why_bad=("PyTorch raises \"Trying to backward through the graph a second time\". "
                 "`retain_graph=True` silences it but is only right when two backward passes through the "
                 "same graph are intended; otherwise it keeps every step's graph in memory and hides the "
                 "bug (a buffer that is never cleared, hidden state never detached)."),
        example=("hidden = torch.zeros(1, 2, 8)\nfor x in batches:\n    out, hidden = rnn(x, hidden)\n"
                 "    loss = out.pow(2).mean()\n    loss.backward()"),
        use_instead=("hidden = torch.zeros(1, 2, 8)\nfor x in batches:\n    out, hidden = rnn(x, hidden.detach())\n"
                     "    loss = out.pow(2).mean()\n    loss.backward()"),
        fix_safety=("The finding carries an unsafe fix where the static rule has one: `.detach()` inserted at "
                    "the carry, or at the discriminator step's use of a GAN's `fake`, never where gradients must "
                    "flow. Detaching is right for carried state (truncated BPTT) and for a discriminator step "
                    "(`D(fake.detach())`); it is wrong where gradients must flow, such as a generator step: "
                    "there, recompute the forward or order the two losses so the one that must reach the "
                    "generator runs first. When two losses share a graph on purpose, sum them and backward "
                    "once, or pass `retain_graph=True` to the first backward only."),
        references=(_BACKWARD, _AUTOGRAD),
        confirms=("GS402",),
        fix_available=True,
    ),
    TraceRule(
        code="GS903", name="backward-without-grad-confirmed", severity=Severity.ERROR,
        summary="backward() was called on a tensor with no autograd history; the finding names what cut it.",
        what_it_does=("Two findings: one on the statement that cut or never started the history (a "
                      "`with torch.no_grad():` / `inference_mode` block, `.detach()`, `.item()`/`.tolist()` "
                      "rebuilt with `torch.tensor(...)`, a non-differentiable op such as `argmax`, the "
                      "`requires_grad_(False)` that froze the parameters, a tensor created without "
                      "`requires_grad`), one on the failing backward; each names the other, and a cut inside a "
                      "function also names the caller's line."),
        why_bad=("PyTorch raises \"element 0 of tensors does not require grad and does not have a grad_fn\" "
                 "at the backward, which is not where the fix goes."),
        example="with torch.no_grad():\n    logits = model(x)\nloss = F.cross_entropy(logits, y)\nloss.backward()",
        use_instead="logits = model(x)\nloss = F.cross_entropy(logits, y)\nloss.backward()",
        references=(_AUTOGRAD + "#locally-disabling-gradient-computation",),
        confirms=("GS401", "GS203", "GS210"),
    ),
    TraceRule(
        code="GS904", name="parameter-without-gradient", severity=Severity.WARNING,
        summary="Parameters that require grad never received a gradient during the whole run.",
        what_it_does=("Reported at the cut (`.detach()`, `.numpy()`, `.item()` rebuilt into a new leaf, a "
                      "`no_grad` block) that kept parameters or `requires_grad` inputs out of every backward, "
                      "one finding per cut; when no cut was seen, one finding per module whose parameters an "
                      "optimizer updates but no backward reached in the whole run (at least two steps), at "
                      "that optimizer's `step()`, as information (a branch not taken in a short trace looks "
                      "the same). A cut under `no_grad` (a frozen feature extractor) is also information."),
        why_bad=("Nothing raises: the optimizer silently skips those parameters and that part of the "
                 "model never learns."),
        example="feat = encoder(x).detach()\nloss = head(feat).pow(2).mean()\nloss.backward()\nopt.step()  # opt holds encoder's parameters too",
        use_instead="feat = encoder(x)\nloss = head(feat).pow(2).mean()\nloss.backward()\nopt.step()",
        fix_safety=("If the part is meant to stay fixed, freeze it (`requires_grad_(False)`) and leave its "
                    "parameters out of the optimizer instead of removing the cut."),
        references=(_AUTOGRAD,),
        confirms=("GS202", "GS210", "GS203"),
    ),
    TraceRule(
        code="GS905", name="graph-kept-alive", severity=Severity.WARNING,
        summary="A line extends, after a backward, a graph built before it, so every step's graph stays in memory.",
        what_it_does="Reported at the line (typically `total_loss += loss`) with the backward in `related`.",
        why_bad="Memory grows with every step until the process runs out; nothing raises until then.",
        example="total = 0\nfor x in batches:\n    loss = model(x).mean()\n    loss.backward()\n    total += loss",
        use_instead="total = 0.0\nfor x in batches:\n    loss = model(x).mean()\n    loss.backward()\n    total += loss.item()",
        references=("https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory",),
        confirms=("GS404",),
    ),
    TraceRule(
        code="GS906", name="leaf-inplace-confirmed", severity=Severity.ERROR,
        summary="An in-place write went into a leaf tensor that requires grad.",
        what_it_does="Reported at the write, with where the leaf was created and the calling lines in `related`.",
        why_bad="PyTorch raises \"a leaf Variable that requires grad is being used in an in-place operation\".",
        example="w = torch.randn(3, requires_grad=True)\nw -= 0.1 * w.grad",
        use_instead="w = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    w -= 0.1 * w.grad",
        references=(_AUTOGRAD + "#in-place-operations-with-autograd",),
        confirms=("GS302",),
    ),
    TraceRule(
        code="GS907", name="numpy-on-grad-tensor-confirmed", severity=Severity.ERROR,
        summary="`.numpy()` was called on a tensor that requires grad.",
        what_it_does="Reported at the `.numpy()` / `np.asarray(t)` call, with where the tensor got its history.",
        why_bad="PyTorch raises \"Can't call numpy() on Tensor that requires grad\".",
        example="pred = model(x)\narr = pred.numpy()",
        use_instead="pred = model(x)\narr = pred.detach().cpu().numpy()",
        references=("https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html",),
        confirms=("GS201",),
    ),
    TraceRule(
        code="GS908", name="step-without-gradients", severity=Severity.WARNING,
        summary="optimizer.step() ran while none of its parameters had a gradient, so it changed nothing.",
        what_it_does=("Reported at the `step()` call when every parameter of the optimizer has `.grad` None "
                      "(or all zeros right after `zero_grad()`): the step came before any backward, or "
                      "`zero_grad()` ran between the backward and the step."),
        why_bad="Nothing raises; the parameters do not change on that step, and the training loss stalls.",
        example="opt.zero_grad()\nopt.step()\nloss.backward()",
        use_instead="opt.zero_grad()\nloss.backward()\nopt.step()",
        references=(_ZERO_GRAD,),
        confirms=("GS308", "GS507"),
    ),
    TraceRule(
        code="GS909", name="gradients-accumulated-across-steps", severity=Severity.WARNING,
        summary="Gradients were never reset between optimizer steps, so each step used the sum of all earlier ones.",
        what_it_does=("Reported at the optimizer step of the second step whose gradients were not reset "
                      "(`zero_grad()`, `p.grad = None` or `p.grad.zero_()`) since the previous step, with the "
                      "previous step and the backward in `related`. Deliberate gradient accumulation over "
                      "micro-batches resets after each step and is not reported."),
        why_bad="Nothing raises; the effective learning rate grows with every step and training diverges.",
        example="for x in batches:\n    loss = model(x).mean()\n    loss.backward()\n    opt.step()",
        use_instead="for x in batches:\n    opt.zero_grad()\n    loss = model(x).mean()\n    loss.backward()\n    opt.step()",
        references=(_ZERO_GRAD,),
        confirms=("GS503",),
    ),
    TraceRule(
        code="GS910", name="exhausted-parameters-generator", severity=Severity.WARNING,
        summary="clip_grad_norm_() got a generator of parameters that was already used up, so it clipped nothing.",
        what_it_does=("Reported at the `clip_grad_norm_()` call when torch warns that its `parameters` argument "
                      "is an empty generator: `model.parameters()` returns a one-shot generator, and the "
                      "optimizer built from the same generator consumed it. The trace reads torch's own "
                      "warning, which still prints as it would."),
        why_bad="Nothing raises; the gradients are never clipped and the returned norm is 0.",
        example=("params = model.parameters()\nopt = torch.optim.Adam(params)\n...\n"
                 "torch.nn.utils.clip_grad_norm_(params, 1.0)"),
        use_instead=("params = list(model.parameters())\nopt = torch.optim.Adam(params)\n...\n"
                     "torch.nn.utils.clip_grad_norm_(params, 1.0)"),
        references=("https://pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html",),
        confirms=("GS511",),
    ),
    TraceRule(
        code="GS911", name="unregistered-submodule", severity=Severity.WARNING,
        summary="A module kept in a plain dict or list attribute gets gradients, but no optimizer updates it.",
        what_it_does=("Checked at the first optimizer steps: a module stored in a plain `dict`, `list` or "
                      "`tuple` attribute of a module the optimizer trains is not registered, so the owner's "
                      "`parameters()` leaves it out. When its parameters received gradients (it is used in the "
                      "loss) and no optimizer holds them, the finding stands where the module was built, with "
                      "the step in `related`. Unused or frozen modules, and modules some optimizer holds, are "
                      "not reported."),
        why_bad=("Nothing raises; those layers keep their initial weights for the whole run, and `state_dict()`, "
                 "`.to(device)` and `.train()/.eval()` skip them too."),
        example=("self.heads = {'a': nn.Linear(8, 1), 'b': nn.Linear(8, 1)}\n"
                 "opt = torch.optim.SGD(model.parameters(), lr=0.1)"),
        use_instead=("self.heads = nn.ModuleDict({'a': nn.Linear(8, 1), 'b': nn.Linear(8, 1)})\n"
                     "opt = torch.optim.SGD(model.parameters(), lr=0.1)"),
        references=("https://pytorch.org/docs/stable/generated/torch.nn.ModuleDict.html",),
        confirms=("GS510",),
    ),
    TraceRule(
        code="GS912", name="graphs-kept-in-container", severity=Severity.WARNING,
        summary="A dict entry or list keeps tensors with their autograd graphs that no backward ever uses.",
        what_it_does=("When one line has made 3, 4, 8, 16, ... tensors with a graph and at least 3 are alive "
                      "at once, the trace looks (once per line, a few times per run) for the dict entry or list "
                      "holding an older one and for the statement that stores into it (by the entry's string "
                      "key, or by the list's name on the running stack). At the end of the run it is reported "
                      "there, unless a backward later went through those tensors (collecting outputs to "
                      "backpropagate their sum is correct). Stats dicts and histories that keep an entropy or a "
                      "loss with its graph, and evaluation loops without `no_grad` that collect outputs, are the "
                      "usual cases."),
        why_bad=("Nothing raises; every stored graph (its nodes and the tensors they saved for backward) stays "
                 "in memory as long as the container, so memory grows with every step or batch."),
        example=("stats['entropy'] = dist.entropy().mean()\nhistory.append(stats)"),
        use_instead=("stats['entropy'] = dist.entropy().mean().item()\nhistory.append(stats)"),
        references=(_AUTOGRAD,),
        confirms=("GS404",),
    ),
    TraceRule(
        code="GS913", name="loss-term-without-gradient", severity=Severity.WARNING,
        summary="A term added to the loss is a Python number from .item(), so it gives no gradient.",
        what_it_does=("Reported at the `.item()`/`float()` that took a number out of a tensor that requires grad, "
                      "when that number (by its name in the statement and its identity in the running frame) is "
                      "added to or subtracted from a tensor, and that sum, directly or through further additions, "
                      "is what a backward runs on. A number inside a non-linear term (`(q - target.item())**2`) "
                      "or used as a scale (`loss / loss.item()`) is not reported: it does change the gradient."),
        why_bad=("Nothing raises; the penalty or auxiliary loss changes the printed loss but never the update, so "
                 "the regularisation it was meant to apply never happens."),
        example="penalty = model.weight.abs().sum().item()\nloss = fit + 0.1 * penalty\nloss.backward()",
        use_instead="penalty = model.weight.abs().sum()\nloss = fit + 0.1 * penalty\nloss.backward()",
        references=(_AUTOGRAD,),
        confirms=("GS211",),
    ),
)

BY_CODE: dict[str, TraceRule] = {r.code: r for r in TRACE_RULES}
# Trace code -> the static rule codes it confirms (for the editor's "confirmed" mark).
CONFIRMS: dict[str, tuple[str, ...]] = {r.code: r.confirms for r in TRACE_RULES}


def trace_rule(code: str) -> TraceRule | None:
    return BY_CODE.get(code.upper())


def write_pages(folder: str) -> list[str]:
    """Write one `GS9xx.md` page per trace code into `folder` (for docs/rules/, whose generator belongs to the
    static rules); returns the paths written. `python -m gradsight.trace.codes docs/rules` runs it."""
    import os

    os.makedirs(folder, exist_ok=True)
    written = []
    for rule in TRACE_RULES:
        path = os.path.join(folder, f"{rule.code}.md")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(rule.docs_markdown())
        written.append(path)
    return written


if __name__ == "__main__":
    import sys

    for p in write_pages(sys.argv[1] if len(sys.argv) > 1 else "."):
        print(p)
