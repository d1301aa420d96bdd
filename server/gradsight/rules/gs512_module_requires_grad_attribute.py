from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..findings import Severity
from ._syntax import enclosing_arms
from .base import Invalid, Rule, Valid, dotted_name




class ModuleRequiresGradAttribute(Rule):
    code = "GS512"
    name = "module-requires-grad-attribute"
    severity = Severity.WARNING
    summary = "`module.requires_grad = False` sets a plain attribute on the module and freezes nothing."
    events = (FileEvent,)
    what_it_does = ("Flags an assignment to `.requires_grad` on an `nn.Module` (a name or attribute bound to an "
                    "`nn.*` layer or to an instance of a local `nn.Module` subclass, or `self` inside one), or on an "
                    "attribute the file also calls (`self.bert_model(...)`): a tensor is not callable, so whatever "
                    "made it, it is a module (or another object) whose parameters the assignment does not touch.")
    why_bad = ("`requires_grad` is a property of tensors, not of modules. On a module the assignment only "
               "stores a new Python attribute: every parameter still requires grad, backward still computes "
               "their gradients and the optimizer keeps updating the layer you meant to freeze. Nothing raises.")
    example = "backbone = nn.Linear(4, 4)\nbackbone.requires_grad = False"
    use_instead = "backbone = nn.Linear(4, 4)\nbackbone.requires_grad_(False)"
    fix_safety = "This rule offers no automatic fix: freezing changes what training does, so it is left to you."
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.requires_grad_",
                  "https://pytorch.org/docs/stable/notes/autograd.html#setting-requires-grad")
    _head = "import torch\nimport torch.nn as nn\n\nbackbone = nn.Linear(4, 4)\nhead = nn.Linear(4, 1)\n"
    _tail = ("opt = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.1)\n"
             "before = backbone.weight.detach().clone()\n"
             "head(backbone(torch.randn(8, 4))).pow(2).mean().backward()\nopt.step()\n")
    _net = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.encoder = nn.Linear(4, 4)\n        self.head = nn.Linear(4, 1)\n\n"
            "    def forward(self, x):\n        return self.head(self.encoder(x))\n\n\nnet = Net()\n")
    valid = (
        Valid(_head + "backbone.requires_grad_(False)\n" + _tail),
        # Parameters of the modules a loop visits are tensors: this freezes them.
        # `v` is a module in one loop and a parameter in the next (yolov7's freeze loop).
        Valid("import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))\n"
              "for k, v in model.named_modules():\n    print(k, type(v).__name__)\n"
              "for k, v in model.named_parameters():\n    v.requires_grad = k.startswith('1.')\n"
              "assert not model[0].weight.requires_grad\n"),
        Valid("import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))\n"
              "for m in model.modules():\n    if isinstance(m, nn.BatchNorm1d):\n        m.weight.requires_grad = False\n"
              "for p in model.parameters():\n    p.requires_grad = False\nassert not model[0].weight.requires_grad\n"),
        # A plain class of the user's design whose `requires_grad` setting is its API (allennlp's bias
        # mitigators): it is called, but it is not a module.
        Valid("import torch\n\n\nclass Mitigator:\n    def __init__(self, requires_grad=False):\n"
              "        self.requires_grad = requires_grad\n\n    def __call__(self, x):\n"
              "        with torch.set_grad_enabled(self.requires_grad):\n            return x * 2\n\n\n"
              "class Wrapper(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.mitigator = Mitigator(requires_grad=True)\n\n    def forward(self, x):\n"
              "        return self.mitigator(x)\n\n    def train(self, mode=True):\n"
              "        self.mitigator.requires_grad = mode\n        return super().train(mode)\n\n\n"
              "w = Wrapper()\nw.eval()\nprint(w(torch.randn(2)))\n"),
        Valid(_head + "for p in backbone.parameters():\n    p.requires_grad = False\n" + _tail),
        Valid(_head + "backbone.weight.requires_grad = False\nbackbone.bias.requires_grad = False\n" + _tail),
        Valid(_net + "net.encoder.requires_grad_(False)\nn_trainable = sum(p.requires_grad for p in net.parameters())\n"),
        # A module that keeps its own `requires_grad` setting and reads it back uses the attribute on purpose.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Frozen(nn.Module):\n    def __init__(self, train):\n"
              "        super().__init__()\n        self.lin = nn.Linear(2, 2)\n        self.requires_grad = train\n"
              "        self.lin.requires_grad_(self.requires_grad)\n\n\nf = Frozen(False)\n"),
        # A tensor attribute (here a parameter made frozen, then thawed): `.requires_grad` is the real flag there.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Scale(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.w = nn.Parameter(torch.ones(2), requires_grad=False)\n"
              "        self.w.requires_grad = True\n\n"
              "    def forward(self, x):\n        return x * self.w\n\n\nout = Scale()(torch.ones(2))\n"),
        # A constructor storing its argument keeps a setting (speechbrain's Fbank), acted on elsewhere.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Fbank(nn.Module):\n    def __init__(self, requires_grad=False):\n"
              "        super().__init__()\n        self.requires_grad = requires_grad\n"
              "        self.lin = nn.Linear(2, 2).requires_grad_(requires_grad)\n\n\nf = Fbank()\n"),
        # An attribute that is a Parameter on this branch and a module on the other (segan's GSkip): the write
        # follows the Parameter's assignment, so it freezes that Parameter.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass GSkip(nn.Module):\n    def __init__(self, skip_type, size):\n"
              "        super().__init__()\n        self.skip_type = skip_type\n        if skip_type == 'constant':\n"
              "            self.skip = nn.Parameter(torch.ones(1, size, 1))\n            self.skip.requires_grad = False\n"
              "        else:\n            self.skip = nn.Conv1d(size, size, 1)\n\n    def forward(self, x):\n"
              "        if self.skip_type == 'conv':\n            return self.skip(x)\n"
              "        return self.skip * x\n\n\n"
              "g = GSkip('constant', 4)\nx = torch.randn(2, 4, 3, requires_grad=True)\ng(x).sum().backward()\n"
              "assert g.skip.grad is None and x.grad is not None\n"),
        # `m.requires_grad = ...` in the arm `isinstance(m, nn.Parameter)` selects: a parameter, frozen so (dytox's
        # `freeze_parameters`, handed parameters and modules; bench/fresh34-false/02).
        Valid('import torch\nfrom torch import nn\n\n\ndef freeze_parameters(m, requires_grad=False):\n    if m is None:\n        return\n\n    if isinstance(m, nn.Parameter):\n        m.requires_grad = requires_grad\n    else:\n        for p in m.parameters():\n            p.requires_grad = requires_grad\n\n\nclass Tiny(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.pos_embed = nn.Parameter(torch.zeros(1, 5, 4))\n        self.norm = nn.LayerNorm(4)\n\n\nm = Tiny()\nfreeze_parameters(m)\nfreeze_parameters(m.pos_embed)\nfreeze_parameters(m.norm)\n'),
    )
    invalid = (
        # A "freeze" loop over the layers a model's `.children()` gives (catalyst's `ResnetEncoder`): each is a
        # module, so nothing is frozen.
        Invalid("import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))\n"
                "layers = list(model.children())[:-1]\nfor param in layers:\n    param.requires_grad = False\n",
                line=5, runtime="silent: model[0].weight.requires_grad"),
        Invalid(_head + "backbone.requires_grad = False\n" + _tail, line=6,
                runtime="silent: not torch.equal(before, backbone.weight)"),
        Invalid(_net + "net.encoder.requires_grad = False\nn_trainable = sum(p.requires_grad for p in net.parameters())\n",
                line=16, runtime="silent: n_trainable == 4"),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Frozen(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.lin = nn.Linear(2, 2)\n        self.requires_grad = False\n\n\n"
                "n_trainable = sum(p.requires_grad for p in Frozen().parameters())\n", line=9,
                runtime="silent: n_trainable == 2"),
        # timm's PyramidVisionTransformerV2.freeze_patch_emb had this shape.
        Invalid(_net.replace("    def forward", "    def freeze_encoder(self):\n        self.encoder.requires_grad = False\n\n"
                             "    def forward") + "net.freeze_encoder()\n"
                "n_trainable = sum(p.requires_grad for p in net.parameters())\n", line=12,
                runtime="silent: n_trainable == 4"),
        Invalid(_net + "net.requires_grad = False\nn_trainable = sum(p.requires_grad for p in net.parameters())\n",
                line=16, runtime="silent: n_trainable == 4"),
        # allennlp's BertForClassification had this shape: the module is handed in, so only its use shows it is one.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Classifier(nn.Module):\n"
                "    def __init__(self, encoder, trainable=False):\n        super().__init__()\n"
                "        self.encoder = encoder\n        self.encoder.requires_grad = trainable\n"
                "        self.head = nn.Linear(4, 1)\n\n    def forward(self, x):\n"
                "        return self.head(self.encoder(x))\n\n\nclf = Classifier(nn.Linear(4, 4))\n"
                "n_trainable = sum(p.requires_grad for p in clf.encoder.parameters())\n", line=9,
                runtime="silent: n_trainable == 2"),
        # The same attribute with the write after the module's assignment: it freezes nothing.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass GSkip(nn.Module):\n    def __init__(self, skip_type, size):\n"
                "        super().__init__()\n        self.skip_type = skip_type\n        if skip_type == 'conv':\n"
                "            self.skip = nn.Conv1d(size, size, 1)\n            self.skip.requires_grad = False\n"
                "        else:\n            self.skip = nn.Parameter(torch.ones(1, size, 1))\n\n    def forward(self, x):\n"
                "        if self.skip_type == 'conv':\n            return self.skip(x)\n"
                "        return self.skip * x\n\n\n"
                "g = GSkip('conv', 4)\n", line=11, runtime="silent: g.skip.weight.requires_grad"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "requires_grad" not in q.attr_stores:
            return  # nothing assigns `.requires_grad` (one pass; this rule runs on every keystroke)
        modules = self._module_spellings(q)
        # Evidence from use: something the file calls (`self.bert_model(input_ids)`) is not a tensor (tensors are
        # not callable); with `.requires_grad = ...` set on it, it is a module whatever made it (a pretrained model
        # handed in, `model.pooler` of a library model).
        modules |= {dotted_name(n.func) for n in q.calls() if isinstance(n.func, ast.Attribute)} - {None}
        # ... unless it was made by a constructor that takes a `requires_grad=` setting (no torch.nn module does):
        # an object of the user's own design whose `requires_grad` attribute is its API (allennlp's
        # `self.mitigator = HardBiasMitigator(requires_grad=...)`, a plain class with `__call__`).
        modules -= self._settings_objects(q)
        in_child_loops = _child_loop_assigns(q)
        read_back = {dotted_name(n.value) for n in q.nodes() if isinstance(n, ast.Attribute)
                     and n.attr == "requires_grad" and isinstance(n.ctx, ast.Load)}
        for node in q.nodes():
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if not (isinstance(target, ast.Attribute) and target.attr == "requires_grad"):
                    continue
                owner = dotted_name(target.value)
                if owner is None or owner in read_back:
                    continue
                # `self.requires_grad = requires_grad` in a constructor usually stores a setting that the class
                # acts on elsewhere; only a literal `True`/`False` on `self` reads as an attempt to freeze.
                in_module = owner == "self" and isinstance(node.value, ast.Constant) \
                    and self._inside_module_class(q, node)
                if not (in_module or owner in modules or self._attr_of_module(owner, modules)
                        or id(node) in in_child_loops):
                    continue
                if _tensor_just_bound(q, node, owner) or _tensor_arm(q, node, owner):
                    continue
                flag = report.source.segment(node.value)
                flag = flag if flag and len(flag) <= 30 and "\n" not in flag else "False"
                report.add(self, node, f"`{owner}` is a module: `.requires_grad = ...` freezes none of its "
                                       f"parameters; use `{owner}.requires_grad_({flag})`.")

    @staticmethod
    def _module_spellings(q) -> set:
        """Dotted names bound to a module: `x = nn.Linear(...)`, `self.enc = Net()`, `net = Net()`."""
        found = set()
        for node in q.nodes():
            if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
                continue
            if q.is_module_constructor(node.value):
                for target in node.targets:
                    spelled = dotted_name(target)
                    if spelled:
                        found.add(spelled)
        return found

    @staticmethod
    def _settings_objects(q) -> set:
        """Dotted names bound to `Cls(..., requires_grad=...)` anywhere in the file."""
        found = set()
        for node in q.assigns:
            if isinstance(node.value, ast.Call) and any(kw.arg == "requires_grad" for kw in node.value.keywords):
                found |= {dotted_name(t) for t in node.targets} - {None}
        return found

    @staticmethod
    def _attr_of_module(owner: str, modules: set) -> bool:
        """`net.encoder` where `self.encoder` is a module set in a class: match on the attribute's name."""
        head, _, attr = owner.rpartition(".")
        return bool(head) and f"self.{attr}" in modules

    @staticmethod
    def _inside_module_class(q, node: ast.AST) -> bool:
        cls = q.enclosing(node, (ast.ClassDef,))
        return cls is not None and q.is_module_class(cls)


def _tensor_maker(q, value: ast.AST) -> bool:
    """`nn.Parameter(...)`, `torch.zeros(...)`, `F.normalize(...)`: a call that surely makes a tensor."""
    name = q.call_name(value) if isinstance(value, ast.Call) else None
    if not name or q.is_module_constructor(value):
        return False
    return name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") or name.count(".") == 1 \
        and name.startswith("torch.") or name.startswith("torch.nn.functional.")


def _tensor_just_bound(q, node: ast.Assign, owner: str) -> bool:
    """The nearest earlier statement of `node`'s own block that binds `owner` binds it to a tensor: that value is the
    one the write sets the flag of, whatever `owner` is on other branches (segan's `self.skip` is a frozen
    `nn.Parameter` in the 'constant' branch and an `nn.Conv1d` in the 'conv' one). A statement in between that may
    rebind `owner` (inside an `if`, a loop) leaves the question open."""
    parent = q.parent(node)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and node in block:
            break
    else:
        return False
    for stmt in reversed(block[:block.index(node)]):
        if isinstance(stmt, ast.Assign) and any(dotted_name(t) == owner for t in stmt.targets):
            return _tensor_maker(q, stmt.value)
        if any(isinstance(n, (ast.Attribute, ast.Name)) and isinstance(n.ctx, ast.Store) and dotted_name(n) == owner
               for n in ast.walk(stmt)):
            return False
    return False


_CHILD_METHODS = ("children", "modules")


def _child_call(expr) -> bool:
    """`m.children()` or `m.modules()`, also inside `list(...)` / `tuple(...)` and sliced (`[:-1]`)."""
    while True:
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple") \
                and len(expr.args) == 1:
            expr = expr.args[0]
        else:
            break
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CHILD_METHODS \
        and not expr.args


def _child_loop_assigns(q) -> set:
    """`x.requires_grad = ...` statements (as `id`s) in the body of a loop whose variable `x` visits a model's
    submodules: `for layer in model.children()`, `for m in layers` with `layers = list(model.children())[:-2]`,
    `for name, m in model.named_modules()`. Only inside that loop: a name such as `v` is a parameter in the next
    loop (`for k, v in model.named_parameters()`, yolov7's freeze loop)."""
    lists = {t.id for node in q.assigns if _child_call(node.value) for t in node.targets if isinstance(t, ast.Name)}
    found = set()
    for node in q.nodes():
        if not isinstance(node, ast.For):
            continue
        it, target, var = node.iter, node.target, None
        if _child_call(it) or isinstance(it, ast.Name) and it.id in lists:
            var = target.id if isinstance(target, ast.Name) else None
        elif isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) \
                and it.func.attr in ("named_children", "named_modules") and isinstance(target, ast.Tuple) \
                and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name):
            var = target.elts[1].id
        if var is None:
            continue
        for stmt in node.body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Assign) and any(
                        isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name)
                        and t.value.id == var for t in sub.targets):
                    found.add(id(sub))
    return found


_TENSOR_TYPES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.Tensor"})


def _tensor_arm(q, node: ast.AST, owner: str) -> bool:
    """Whether `node` runs only where `owner` is a tensor: in the body of `if isinstance(owner, nn.Parameter):` (or
    `torch.Tensor`), as dytox's `freeze_parameters(m)` handles a parameter and a module in two arms."""
    for stmt, in_body in enclosing_arms(q, node):
        test = stmt.test
        if in_body and isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2 and dotted_name(test.args[0]) == owner:
            classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
            if all(q.qualname(c) in _TENSOR_TYPES for c in classes):
                return True
    return False
