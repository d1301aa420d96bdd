"""Cross-file analysis: calls into workspace modules are analysed; caches notice when those files change."""

import os
import subprocess
import sys

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

HELPER_CUT = "import torch\n\n\ndef normalise(t):\n    values = t.tolist()\n    return torch.tensor(values) / 2\n"
HELPER_OK = "import torch\n\n\ndef normalise(t):\n    return t / 2\n"
MAIN = ("import torch\nimport torch.nn as nn\nfrom pkg.helpers import normalise\n\nlayer = nn.Linear(4, 3)\n"
        "loss = normalise(layer(torch.randn(2, 4))).sum()\nloss.backward()\n")


def make(tmp_path, helper):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(helper)
    (tmp_path / "train.py").write_text(MAIN)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")


def test_helper_in_other_file_names_the_cut(tmp_path):
    make(tmp_path, HELPER_CUT)
    ws = Workspace(tmp_path)
    a = analyze_source(MAIN, str(tmp_path / "train.py"), workspace=ws)
    f = next(f for f in a.findings if f.code == "GS401")
    assert f.line == 7 and "helpers.py line 5" in f.message
    assert any(r.path.endswith("helpers.py") and r.line == 5 for r in f.related)
    assert str((tmp_path / "pkg" / "helpers.py").resolve()) in a.dependencies


def test_without_workspace_the_call_is_unknown_and_quiet(tmp_path):
    make(tmp_path, HELPER_CUT)
    assert not analyze_source(MAIN, str(tmp_path / "train.py")).findings


def test_relative_import_and_overlay(tmp_path):
    make(tmp_path, HELPER_OK)
    rel = MAIN.replace("from pkg.helpers import", "from .helpers import")
    (tmp_path / "pkg" / "train.py").write_text(rel)
    ws = Workspace(tmp_path)
    assert not analyze_source(rel, str(tmp_path / "pkg" / "train.py"), workspace=ws).findings
    ws.set_overlay(str(tmp_path / "pkg" / "helpers.py"), HELPER_CUT)  # an unsaved editor buffer
    assert [f.code for f in analyze_source(rel, str(tmp_path / "pkg" / "train.py"), workspace=ws).findings] == ["GS401"]


def test_findings_inside_imported_file_are_not_reported_here(tmp_path):
    make(tmp_path, "import torch\n\n\ndef f(t):\n    t.add_(1)\n    return t\n")
    main = "import torch\nfrom pkg.helpers import f\nw = torch.ones(3, requires_grad=True)\nf(w)\n"
    a = analyze_source(main, str(tmp_path / "train.py"), workspace=Workspace(tmp_path))
    assert all(f.path.endswith("train.py") for f in a.findings)


def test_cli_cache_notices_changed_import(tmp_path):
    make(tmp_path, HELPER_CUT)
    run = lambda: subprocess.run([sys.executable, "-m", "gradsight", "check", "train.py"], cwd=tmp_path,
                                 capture_output=True, text=True)
    assert run().returncode == 1
    (tmp_path / "pkg" / "helpers.py").write_text(HELPER_OK)
    assert run().returncode == 0


def test_definition_cache_sees_helper_edits(tmp_path):
    """Functions that call into an imported helper are re-analysed when the helper's text changes."""
    from gradsight import analysis

    make(tmp_path, HELPER_OK)
    main = ("import torch\nimport torch.nn as nn\nfrom pkg.helpers import normalise\n\n\ndef train():\n"
            "    layer = nn.Linear(4, 3)\n    loss = normalise(layer(torch.randn(2, 4))).sum()\n    loss.backward()\n")
    ws = Workspace(tmp_path)
    path = str(tmp_path / "train.py")
    assert not analyze_source(main, path, workspace=ws).findings
    ws.set_overlay(str(tmp_path / "pkg" / "helpers.py"), HELPER_CUT)
    assert [f.code for f in analyze_source(main, path, workspace=ws).findings] == ["GS401"]
    ws.set_overlay(str(tmp_path / "pkg" / "helpers.py"), HELPER_OK)
    assert not analyze_source(main, path, workspace=ws).findings
    assert len(analysis.ENGINE.units)


SIBLING_MAIN = MAIN.replace("from pkg.helpers import", "from helpers import")


def test_sibling_modules_resolve_without_project_marker(tmp_path):
    # A folder of scripts with no pyproject/setup/__init__, opened from a workspace root elsewhere (the editor
    # opened a parent folder; `gradsight check scripts/` from the repository root): `python train.py` would
    # import the sibling helpers.py, and so does the analysis.
    folder = tmp_path / "experiments" / "run1"
    folder.mkdir(parents=True)
    (folder / "helpers.py").write_text(HELPER_CUT)
    (folder / "train.py").write_text(SIBLING_MAIN)
    other_root = tmp_path / "elsewhere"
    other_root.mkdir()
    for root in (tmp_path, other_root):
        a = analyze_source(SIBLING_MAIN, str(folder / "train.py"), workspace=Workspace(root))
        assert [f.line for f in a.findings if f.code == "GS401"] == [7], root
        assert str((folder / "helpers.py").resolve()) in a.dependencies


def test_sibling_lookup_depends_on_the_importing_folder(tmp_path):
    # The same import from two folders names two different files (answers are cached per folder).
    for name, helper in (("a", HELPER_CUT), ("b", HELPER_OK)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "helpers.py").write_text(helper)
    ws = Workspace(tmp_path / "a")
    assert ws.find("helpers", 0, str(tmp_path / "a" / "train.py")) == (tmp_path / "a" / "helpers.py").resolve()
    assert ws.find("helpers", 0, str(tmp_path / "b" / "train.py")) == (tmp_path / "b" / "helpers.py").resolve()
    assert ws.find("torch", 0, str(tmp_path / "a" / "train.py")) is None


# A conv-BN-ReLU block with an in-place ReLU (pytorch-semseg's `conv2DBatchNormRelu`), and a model that applies an
# in-place Dropout2d to its output: the dropout overwrites what the ReLU saved (torch raises in training mode).
BLOCK = ("import torch.nn as nn\n\n\nclass CBR(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
         "        self.conv = nn.Conv2d(n, n, 3, padding=1)\n        self.relu = nn.ReLU(inplace=True)\n\n"
         "    def forward(self, x):\n        return self.relu(self.conv(x))\n")
NET = ("import torch\nimport torch.nn as nn\nfrom {mod} import *\n\n\nclass Net(nn.Module):\n"
       "    def __init__(self):\n        super().__init__()\n        self.cbr = CBR(2)\n"
       "        self.drop = nn.Dropout2d(p=0.1, inplace=True)\n\n    def forward(self, x):\n"
       "        return self.drop(self.cbr(x))\n\n\nnet = Net()\nnet(torch.randn(1, 2, 4, 4)).sum().backward()\n")


def _package(base, mod):
    pkg = base / "pkg"
    (pkg / "models").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "models" / "__init__.py").write_text("")
    (pkg / "models" / "utils.py").write_text(BLOCK)
    (pkg / "models" / "net.py").write_text(NET.format(mod=mod))
    return pkg / "models" / "net.py"


def test_star_import_from_a_workspace_module_is_followed(tmp_path):
    net = _package(tmp_path, "pkg.models.utils")
    a = analyze_source(net.read_text(), str(net), workspace=Workspace(tmp_path))
    assert [(f.code, f.line) for f in a.findings] == [("GS301", 10)]
    rel = NET.format(mod=".utils")
    net.write_text(rel)
    a = analyze_source(rel, str(net), workspace=Workspace(tmp_path))
    assert [(f.code, f.line) for f in a.findings] == [("GS301", 10)]
    # The same model without the in-place dropout is quiet.
    ok = rel.replace("inplace=True)\n\n    def forward", "inplace=False)\n\n    def forward")
    assert not analyze_source(ok, str(net), workspace=Workspace(tmp_path)).findings


def test_absolute_import_of_own_package_resolves_outside_the_workspace(tmp_path):
    # `gradsight check /elsewhere/pkg/models/net.py` run from another folder: the folder above the package that
    # holds the file is an import root, as `python -m pkg.models.net` would make it.
    net = _package(tmp_path / "elsewhere", "pkg.models.utils")
    (tmp_path / "ws").mkdir()
    a = analyze_source(net.read_text(), str(net), workspace=Workspace(tmp_path / "ws"))
    assert [(f.code, f.line) for f in a.findings] == [("GS301", 10)]


ALGO_BASE = ("import torch\nimport torch.nn as nn\n\n\nclass Algorithm:\n    def __init__(self, dim):\n"
             "        self.net = nn.Linear(dim, 1)\n        self.log_alpha = torch.zeros(1, requires_grad=True)\n"
             "        self.optim = torch.optim.Adam(list(self.net.parameters()) + [self.log_alpha], lr=0.1)\n\n"
             "    def act(self, x):\n        return self.net(x)\n")
ALGO_SAC = ("import torch\nfrom algo.base import Algorithm\n\n\nclass SAC(Algorithm):\n    def update(self, x):\n"
            "        loss = (self.act(x) * self.log_alpha.exp()).mean()\n        self.optim.zero_grad()\n"
            "        loss.backward()\n        self.optim.step()\n        self.log_alpha.clamp_(-5, 4)\n"
            "        return loss.item()\n\n\nif __name__ == \"__main__\":\n    SAC(3).update(torch.randn(4, 3))\n")
BASE_NET = ("import torch.nn as nn\n\n\nclass BaseNet(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(3, 1)\n")
SUB_NET = ("import torch\nfrom algo.basenet import BaseNet\n\n\nclass Net(BaseNet):\n    def forward(self, x):\n"
       "        return self.fc(x).relu()\n\n\nnet = Net()\nout = net(torch.randn(2, 3))\nprint(out.numpy())\n")


def _algo(tmp_path):
    (tmp_path / "algo").mkdir()
    for name, text in (("__init__.py", ""), ("base.py", ALGO_BASE), ("sac.py", ALGO_SAC), ("basenet.py", BASE_NET),
                       ("net.py", SUB_NET)):
        (tmp_path / "algo" / name).write_text(text)


def _raises(tmp_path, module: str) -> str:
    proc = subprocess.run([sys.executable, "-m", module], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return proc.stderr


def test_base_class_in_another_file_is_followed(tmp_path):
    # A plain class deriving from a class of another workspace file (SLM-Lab's `SoftActorCritic(ActorCritic)`):
    # what the base's `__init__` made is known in the subclass's methods.
    _algo(tmp_path)
    sac = tmp_path / "algo" / "sac.py"
    found = [(f.code, f.line) for f in analyze_source(ALGO_SAC, str(sac), workspace=Workspace(tmp_path)).findings]
    assert found == [("GS302", 11)]
    assert "leaf Variable that requires grad is being used in an in-place operation" in _raises(tmp_path, "algo.sac")
    fixed = ALGO_SAC.replace("        self.log_alpha.clamp_(-5, 4)\n",
                             "        with torch.no_grad():\n            self.log_alpha.clamp_(-5, 4)\n")
    sac.write_text(fixed)
    assert analyze_source(fixed, str(sac), workspace=Workspace(tmp_path)).findings == []
    assert "Error" not in _raises(tmp_path, "algo.sac")


def test_module_base_class_in_another_file_makes_a_module(tmp_path):
    _algo(tmp_path)
    net = tmp_path / "algo" / "net.py"
    found = [(f.code, f.line) for f in analyze_source(SUB_NET, str(net), workspace=Workspace(tmp_path)).findings]
    assert found == [("GS201", 12)]
    assert "Can't call numpy() on Tensor that requires grad" in _raises(tmp_path, "algo.net")


# A model's inference method whose only caller, in another file, runs it under `@torch.no_grad()` (pytorch-book's
# CenterNet `generate`): it is analysed with grad mode unknown, so `.numpy()` on its output is not an error.
NG_MODEL = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def generate(self, x):
        return self.fc(x).numpy()
"""

NG_MAIN = """\
import torch
from model import Net


@torch.no_grad()
def inference(net):
    return net.generate(torch.randn(3, 4))


out = inference(Net())
"""


def test_callers_in_other_files_under_no_grad(tmp_path):
    (tmp_path / "model.py").write_text(NG_MODEL)
    (tmp_path / "main.py").write_text(NG_MAIN)
    model = str(tmp_path / "model.py")
    ws = Workspace(tmp_path)
    a = analyze_source(NG_MODEL, model, workspace=ws)
    assert a.findings == []
    assert str((tmp_path / "main.py").resolve()) in a.dependencies
    assert "Error" not in _raises(tmp_path, "main")
    # Without the workspace, or once the caller runs it in grad mode, the method's own analysis says it raises.
    assert [(f.code, f.line) for f in analyze_source(NG_MODEL, model).findings] == [("GS201", 11)]
    grad = NG_MAIN.replace("@torch.no_grad()\n", "")
    ws.set_overlay(str(tmp_path / "main.py"), grad)  # an unsaved editor buffer: seen at once
    warm = [(f.code, f.line) for f in analyze_source(NG_MODEL, model, workspace=ws).findings]
    assert warm == [("GS201", 11)]
    (tmp_path / "main.py").write_text(grad)
    assert "Can't call numpy() on Tensor that requires grad" in _raises(tmp_path, "main")
    from gradsight import analysis
    analysis.ENGINE.clear()
    assert [(f.code, f.line) for f in analyze_source(NG_MODEL, model, workspace=Workspace(tmp_path)).findings] == warm
    # A buffer edit that cannot call into model.py under no_grad keeps the answer; one that can is seen at once.
    ws = Workspace(tmp_path)
    analyze_source(NG_MODEL, model, workspace=ws)
    ws.set_overlay(str(tmp_path / "notes.py"), "x = 1\n")
    assert str((tmp_path / "model.py").resolve()) in ws._callers
    ws.set_overlay(str(tmp_path / "main.py"), NG_MAIN)
    assert analyze_source(NG_MODEL, model, workspace=ws).findings == []


def test_a_file_that_does_not_import_the_module_is_not_a_caller(tmp_path):
    (tmp_path / "model.py").write_text(NG_MODEL)
    (tmp_path / "other.py").write_text(NG_MAIN.replace("from model import Net", "from net import Net"))
    (tmp_path / "net.py").write_text(NG_MODEL)
    found = analyze_source(NG_MODEL, str(tmp_path / "model.py"), workspace=Workspace(tmp_path)).findings
    assert [(f.code, f.line) for f in found] == [("GS201", 11)]



TWO_HOP_CRF = """import torch
import torch.nn as nn


class CRF(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.start = nn.Parameter(torch.randn(n))
        self.trans = nn.Parameter(torch.randn(n, n))

    def decode(self, emissions):
        score = self.start + emissions[0]
        for i in range(1, emissions.shape[0]):
            nxt, _ = (score.unsqueeze(2) + self.trans + emissions[i].unsqueeze(1)).max(dim=1)
            score = torch.where(nxt > 0, nxt, score)
        return score.argmax(dim=1)
"""
TWO_HOP_TAGGER = ("import torch.nn as nn\n\nfrom crf import CRF\n\n\nclass Tagger(nn.Module):\n    def __init__(self):\n"
                  "        super().__init__()\n        self.fc = nn.Linear(8, 5)\n        self.crf = CRF(5)\n\n"
                  "    def forward(self, x):\n        return self.fc(x)\n")
TWO_HOP_RUN = ("import torch\n\nfrom tagger import Tagger\n\n\ndef evaluate(model, batches):\n    for x in batches:\n"
               "        with torch.no_grad():\n            tags = model.crf.decode(model(x))\n        print(tags.tolist())\n\n\n"
               "if __name__ == \"__main__\":\n    evaluate(Tagger(), [torch.randn(6, 3, 8)])\n")


def test_callers_one_import_further_under_no_grad(tmp_path):
    # run.py imports tagger.py, which imports crf.py; run.py calls `model.crf.decode(...)` only under no_grad
    # (BERT-NER-Pytorch's CRF): the method starts with grad mode unknown, so its loop keeps no graph to report.
    (tmp_path / "crf.py").write_text(TWO_HOP_CRF)
    (tmp_path / "tagger.py").write_text(TWO_HOP_TAGGER)
    (tmp_path / "run.py").write_text(TWO_HOP_RUN)
    crf = str(tmp_path / "crf.py")
    assert "Error" not in _raises(tmp_path, "run")
    a = analyze_source(TWO_HOP_CRF, crf, workspace=Workspace(tmp_path))
    assert a.findings == []
    assert str((tmp_path / "run.py").resolve()) in a.dependencies
    # Alone, or when run.py's chain does not reach crf.py, the method's own analysis reports the loop.
    assert [(f.code, f.line) for f in analyze_source(TWO_HOP_CRF, crf).findings] == [("GS404", 15)]
    (tmp_path / "tagger.py").write_text(TWO_HOP_TAGGER.replace("from crf import CRF", "from crf2 import CRF"))
    (tmp_path / "crf2.py").write_text(TWO_HOP_CRF)
    assert [(f.code, f.line) for f in analyze_source(TWO_HOP_CRF, crf, workspace=Workspace(tmp_path)).findings] \
        == [("GS404", 15)]

REEXPORT_FILES = {
    "torchmodels/__init__.py": "from .net import Net\nfrom .base import *\n",
    "torchmodels/base.py": ("import torch.nn as nn\n\n\nclass BaseNet(nn.Module):\n    def __init__(self):\n"
                       "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n"),
    "torchmodels/net.py": ("import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                      "        self.fc = nn.Linear(3, 1)\n\n    def forward(self, x):\n        return self.fc(x).relu()\n"),
    "torchmodels/layers.py": ("import torch.nn as nn\n\n\nclass Block(nn.Module):\n    def __init__(self):\n"
                         "        super().__init__()\n        self.fc = nn.Linear(3, 3)\n        self.act = nn.Sigmoid()\n\n"
                         "    def forward(self, x):\n        return self.act(self.fc(x))\n"),
    "torchmodels/deep.py": ("import torch\nfrom . import layers\n\n\nclass Deep(torch.nn.Module):\n    def __init__(self):\n"
                       "        super().__init__()\n        self.block = layers.Block()\n\n    def forward(self, x):\n"
                       "        y = self.block(x)\n        y += 1\n        return y\n\n\nif __name__ == \"__main__\":\n"
                       "    Deep()(torch.randn(2, 3)).sum().backward()\n"),
    "train.py": ("import sys\n\nimport torch\nfrom torchmodels import Net, BaseNet\n\n\nclass Sub(BaseNet):\n"
                 "    def forward(self, x):\n        return self.fc(x)\n\n\ndef main():\n"
                 "    out = Net()(torch.randn(2, 3))\n    print(out.numpy())\n\n\ndef other():\n"
                 "    out = Sub()(torch.randn(2, 3))\n    print(out.numpy())\n\n\nif __name__ == \"__main__\":\n"
                 "    main() if sys.argv[1:] == [\"a\"] else other()\n"),
}


def test_names_reexported_by_a_package_and_relative_submodules_resolve(tmp_path):
    # `from torchmodels import Net` where torchmodels/__init__.py re-exports it (`from .net import Net`, or a star import of
    # a module defining a base class), and `from . import layers` then `layers.Block()`: the definitions in the
    # other files are found as a user's checkout would import them. The package's name starts with "torch" and is
    # still the project's own (as `torchrl`, `torch_geometric` or `torchbearer` are), not torch.
    for name, text in REEXPORT_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    ws = Workspace(tmp_path)
    train, deep = tmp_path / "train.py", tmp_path / "torchmodels" / "deep.py"
    assert [(f.code, f.line) for f in analyze_source(train.read_text(), str(train), workspace=ws).findings] == [
        ("GS201", 14), ("GS201", 19)]
    assert [(f.code, f.line) for f in analyze_source(deep.read_text(), str(deep), workspace=ws).findings] == [
        ("GS301", 12)]
    for args in (["train.py", "a"], ["train.py"], ["-m", "torchmodels.deep"]):
        proc = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert ("Can't call numpy() on Tensor that requires grad" if args[0] == "train.py"
                else "modified by an inplace operation") in proc.stderr


MIXER = ("import torch.nn as nn\n\n\nclass QMixer(nn.Module):\n    def __init__(self, args):\n        super().__init__()\n"
         "        self.fc = nn.Linear(3, 1)\n")
LEARNER = ("import torch as th\nfrom torch.optim import RMSprop\nfrom mixers.qmix import QMixer\n\n\nclass QLearner:\n"
           "    def __init__(self, mac, args):\n        self.mac = mac\n        self.params = list(mac.parameters())\n"
           "        self.mixer = None\n        if args.mixer is not None:\n            self.mixer = QMixer(args)\n"
           "            self.params += list(self.mixer.parameters())\n"
           "        self.optimiser = RMSprop(params=self.params, lr=args.lr)\n\n    def train(self, batch, idx):\n"
           "        mac_out = th.stack([self.mac.forward(batch, t=t) for t in range(3)], dim=1)\n"
           "        chosen = th.gather(mac_out[:, :-1], dim=3, index=idx)\n        mac_out[idx == 0] = -9999999\n"
           "        self.optimiser.zero_grad()\n        chosen.sum().backward()\n")


def test_parameter_list_grown_on_one_branch_by_a_module_of_another_file(tmp_path):
    # pymarl's learner: `self.params` holds `mac`'s parameters and, when a mixer is configured, a QMixer's (a module
    # class of another file). After the branch it still holds `mac`'s, so the optimizer over it is evidence that
    # `self.mac.forward(...)` builds a graph, and the masked write into the gathered `mac_out` is an in-place write
    # on a tensor saved for backward (bench/realbugs pymarl_double_q_mask_inplace).
    (tmp_path / "mixers").mkdir()
    (tmp_path / "mixers" / "__init__.py").write_text("")
    (tmp_path / "mixers" / "qmix.py").write_text(MIXER)
    learner = tmp_path / "learner.py"
    learner.write_text(LEARNER)
    found = analyze_source(LEARNER, str(learner), workspace=Workspace(tmp_path)).findings
    assert [(f.code, f.line) for f in found] == [("GS301", 19)]


NS_NETS = ("import json\n\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.fc = nn.Linear(3, 1)\n\n    def forward(self, x):\n        return self.fc(x).sigmoid()\n\n\n"
           "def opaque(text):\n    return json.loads(text)\n")
NS_RUN = ("import torch\nfrom utils.nets import Net, opaque\n\nout = Net()(torch.randn(2, 3))\nmid = opaque('[1]')\n"
          "print(out.numpy())\n")


def test_folder_without_init_is_a_package_of_the_project(tmp_path):
    # `utils/nets.py` with no `utils/__init__.py` (a namespace package, common in research code) imported from a
    # script in another folder of the checkout: the class resolves, and a call into it whose result is unknown is
    # not taken for a library call (jedi is not asked about the project's own functions: seconds per question).
    (tmp_path / "utils").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "utils" / "nets.py").write_text(NS_NETS)
    run = tmp_path / "scripts" / "run.py"
    run.write_text(NS_RUN)
    ws = Workspace(tmp_path.parent)  # the editor's workspace is a folder above the checkout
    assert [(f.code, f.line) for f in analyze_source(NS_RUN, str(run), workspace=ws).findings] == [("GS201", 6)]
    assert ws._libinfer is None or ws._libinfer.asked == 0
    proc = subprocess.run([sys.executable, "scripts/run.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert "Can't call numpy() on Tensor that requires grad" in proc.stderr


TRAINER_BASE = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Trainer(object):\n"
                "    def __init__(self):\n        self.model = nn.Linear(3, 1)\n"
                "        nn.init.zeros_(self.model.weight)\n        nn.init.zeros_(self.model.bias)\n"
                "        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.0)\n\n"
                "    def standard_loss(self, x, y):\n        self.optimizer.zero_grad()\n"
                "        return F.mse_loss(self.model(x), y)\n\n"
                "    def plain_loss(self, x, y):\n        return F.mse_loss(self.model(x), y)\n")
TRAINER_SUB = ("import torch\nfrom trainers.base import Trainer\n\n\nclass WATrainer(Trainer):\n"
               "    def train(self, loader):\n        for x, y in loader:\n            loss = self.standard_loss(x, y)\n"
               "            loss.backward()\n            self.optimizer.step()\n\n\nclass Buggy(Trainer):\n"
               "    def train(self, loader):\n        for x, y in loader:\n            loss = self.plain_loss(x, y)\n"
               "            loss.backward()\n            self.optimizer.step()\n\n\nclass Buggy2(Trainer):\n"
               "    def train(self, loader):\n        for x, y in loader:\n"
               "            loss = ((self.model(x) - y) ** 2).mean()\n            loss.backward()\n"
               "            self.optimizer.step()\n\n\nif __name__ == \"__main__\":\n"
               "    loader = [(torch.ones(4, 3), torch.ones(4, 1))] * 3\n    for cls in (WATrainer, Buggy, Buggy2):\n"
               "        t = cls()\n        t.train(loader)\n        print(cls.__name__, t.model.bias.grad.item())\n")


def test_zero_grad_in_base_class_methods_of_another_file(tmp_path):
    # adversarial_robustness_pytorch's trainer: the loop's loss comes from methods of a base class in another file,
    # each zeroing the optimizer first (GS503 quiet), also where the package re-exports the base
    # (`from .base import Trainer` in its `__init__.py`); a base method that does not zero, or the model the base
    # stored, still leaves the gradients piling up. Under torch (lr 0, each batch adds -2 to the bias's gradient):
    # -2 once zeroed, -6 after three batches otherwise.
    (tmp_path / "trainers").mkdir()
    (tmp_path / "trainers" / "base.py").write_text(TRAINER_BASE)
    (tmp_path / "trainers" / "__init__.py").write_text("from .base import Trainer\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    for name, text in (("direct.py", TRAINER_SUB),
                       ("reexport.py", TRAINER_SUB.replace("from trainers.base import", "from trainers import"))):
        (tmp_path / name).write_text(text)
        found = [(f.code, f.line) for f in analyze_source(text, str(tmp_path / name),
                                                          workspace=Workspace(tmp_path)).findings]
        assert found == [("GS503", 17), ("GS503", 25)], name
    proc = subprocess.run([sys.executable, "direct.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.stdout.split() == ["WATrainer", "-2.0", "Buggy", "-6.0", "Buggy2", "-6.0"]


def test_unseen_code_handed_the_optimizer_may_zero(tmp_path):
    # A loop whose loss comes from a function of another package, handed the optimizer (`trades_loss(model, x, y,
    # optimizer)`, which zeroes it first): GS503 cannot tell, so it stays quiet. A learning-rate helper handed it
    # zeroes nothing, by its name.
    helper = ("import torch.nn.functional as F\n\n\ndef trades_loss(model, x, y, optimizer):\n"
              "    optimizer.zero_grad()\n    return F.mse_loss(model(x), y)\n\n\n"
              "def adjust_learning_rate(optimizer, epoch):\n    for g in optimizer.param_groups:\n"
              "        g[\"lr\"] = 0.1 / (1 + epoch)\n")
    main = ("import torch\nimport torch.nn as nn\nfrom helpers import trades_loss, adjust_learning_rate\n\n"
            "model = nn.Linear(3, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for epoch in range(3):\n    loss = trades_loss(model, torch.ones(4, 3), torch.ones(4, 1), optimizer)\n"
            "    loss.backward()\n    optimizer.step()\n")
    buggy = main.replace("    loss = trades_loss(model, torch.ones(4, 3), torch.ones(4, 1), optimizer)\n",
                         "    adjust_learning_rate(optimizer, epoch)\n"
                         "    loss = ((model(torch.ones(4, 3)) - 1) ** 2).mean()\n")
    (tmp_path / "helpers.py").write_text(helper)
    (tmp_path / "main.py").write_text(main)
    (tmp_path / "buggy.py").write_text(buggy)
    assert analyze_source(main, str(tmp_path / "main.py")).findings == []
    assert [(f.code, f.line) for f in analyze_source(buggy, str(tmp_path / "buggy.py")).findings] == [("GS503", 10)]
    for name in ("main.py", "buggy.py"):
        subprocess.run([sys.executable, name], cwd=tmp_path, check=True, timeout=300)


# The reverse direction (DeepCTR-Torch's DIEN): the base model's method adds what it is given into a tensor kept on
# the model, in place; the base file alone cannot know what it is given. The subclass in another file hands it a loss
# with a graph every forward, so the next backward runs into the freed graph of the step before.
RV_BASE = """\
import torch
import torch.nn as nn


class BaseModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.aux_loss = torch.zeros(1)

    def add_auxiliary_loss(self, aux_loss, alpha):
        if aux_loss is not None:
            self.aux_loss += aux_loss * alpha
"""

RV_SUB = """\
import torch.nn as nn
from .base import BaseModel


class DIEN(BaseModel):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        out = self.fc(x)
        self.add_auxiliary_loss(out.pow(2).mean(), 0.5)
        return out
"""

RV_TRAIN = """\
import torch
from models.dien import DIEN

model = DIEN()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.randn(8, 4)).mean() + model.aux_loss.sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _reverse_project(tmp_path, base=RV_BASE, sub=RV_SUB):
    (tmp_path / "models").mkdir(exist_ok=True)
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "base.py").write_text(base)
    (tmp_path / "models" / "dien.py").write_text(sub)
    (tmp_path / "train.py").write_text(RV_TRAIN)
    return str(tmp_path / "models" / "base.py")


def _codes(analysis):
    return [(f.code, f.line, f.severity.value) for f in analysis.findings]


def test_caller_in_another_file_runs_the_method_with_its_values(tmp_path):
    from gradsight.engine.engine import Engine
    from gradsight.analysis import RULES
    from gradsight.config import Config

    base = _reverse_project(tmp_path)
    assert "Trying to backward through the graph a second time" in _raises(tmp_path, "train")
    a = analyze_source(RV_BASE, base, workspace=Workspace(tmp_path))
    assert _codes(a) == [("GS420", 12, "warning")]
    sub = str((tmp_path / "models" / "dien.py").resolve())
    assert [(r.path, r.line) for r in a.findings[0].related if r.path == sub] == [(sub, 12)]
    assert sub in a.dependencies
    # Alone, the method's argument is unknown: nothing is claimed.
    assert analyze_source(RV_BASE, base).findings == []
    # The fix (the tensor replaced, not added into) runs cleanly and is quiet.
    fixed = RV_BASE.replace("self.aux_loss += aux_loss * alpha", "self.aux_loss = aux_loss * alpha")
    (tmp_path / "models" / "base.py").write_text(fixed)
    assert "Error" not in _raises(tmp_path, "train")
    assert analyze_source(fixed, base, workspace=Workspace(tmp_path)).findings == []
    (tmp_path / "models" / "base.py").write_text(RV_BASE)
    # A caller that hands it a detached value (an editor buffer, seen at once): quiet, and torch agrees.
    detached = RV_SUB.replace("out.pow(2).mean(), 0.5", "out.pow(2).mean().detach(), 0.5")
    ws = Workspace(tmp_path)
    engine = Engine()
    assert _codes(engine.analyze(RV_BASE, base, Config(), ws, rules=RULES)) == [("GS420", 12, "warning")]
    ws.set_overlay(sub, detached)
    assert engine.analyze(RV_BASE, base, Config(), ws, rules=RULES).findings == []
    (tmp_path / "models" / "dien.py").write_text(detached)
    assert "Error" not in _raises(tmp_path, "train")
    ws.set_overlay(sub, None)
    (tmp_path / "models" / "dien.py").write_text(RV_SUB)
    # Incremental == cold: edits of the analysed file above and inside the method, warm and fresh.
    ws = Workspace(tmp_path)
    for text in (RV_BASE, "# a comment\n\n" + RV_BASE, RV_BASE.replace("alpha\n", "alpha * 2\n"), fixed, RV_BASE):
        warm = _codes(engine.analyze(text, base, Config(), ws, rules=RULES))
        cold = _codes(Engine().analyze(text, base, Config(), Workspace(tmp_path), rules=RULES))
        assert warm == cold, text


# The same base model whose method reads a module-level binding (`prepare`): which function it names decides what is
# added in place. Module-level edits re-run a caller only when they change what the caller's run looked up.
RV_BASE_READS = """\
import torch
import torch.nn as nn

EPS = 1e-6


def _keep(x):
    return x


def _cut(x):
    return x.detach()


prepare = _keep


class BaseModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.aux_loss = torch.zeros(1)

    def add_auxiliary_loss(self, aux_loss, alpha):
        if aux_loss is not None:
            self.aux_loss += prepare(aux_loss) * alpha
"""


def test_a_caller_reruns_only_when_module_level_values_it_read_change(tmp_path):
    from gradsight.engine.engine import Engine
    from gradsight.analysis import RULES
    from gradsight.config import Config

    base = _reverse_project(tmp_path, base=RV_BASE_READS)
    assert "Trying to backward through the graph a second time" in _raises(tmp_path, "train")
    cut = RV_BASE_READS.replace("prepare = _keep", "prepare = _cut")
    (tmp_path / "models" / "base.py").write_text(cut)
    assert "Error" not in _raises(tmp_path, "train")
    (tmp_path / "models" / "base.py").write_text(RV_BASE_READS)
    engine, ws = Engine(), Workspace(tmp_path)
    # Runs per version: both units (the subclass's `forward`, and the method run on its instance) the first time and
    # after the edit of `prepare`; after edits of data nobody read, at most the one whose finding a rule built from
    # the whole text (GS420 reads the tree; such a result is kept only while the whole text is the same).
    versions = [
        (RV_BASE_READS, [("GS420", 25, "warning")], {2}),
        (RV_BASE_READS.replace("EPS = 1e-6", "EPS = 1e-7"), [("GS420", 25, "warning")], {0, 1}),
        (RV_BASE_READS.replace("EPS = 1e-6\n", "EPS = 1e-6\nNAMES = ['a']\n"), [("GS420", 26, "warning")], {0, 1}),
        (cut, [], {2}),  # the binding the method reads changed: both run again, and quiet
        (RV_BASE_READS, [("GS420", 25, "warning")], {0, 1}),  # back: the first version's results
    ]
    for text, expected, runs in versions:
        before = engine.stats["callers_run"]
        warm = _codes(engine.analyze(text, base, Config(), ws, rules=RULES))
        cold = _codes(Engine().analyze(text, base, Config(), Workspace(tmp_path), rules=RULES))
        assert warm == cold == expected, text
        assert engine.stats["callers_run"] - before in runs, text


def test_a_caller_that_does_not_call_the_sensitive_method_is_not_run(tmp_path):
    sub = RV_SUB.replace("        self.add_auxiliary_loss(out.pow(2).mean(), 0.5)\n", "")
    base = _reverse_project(tmp_path, sub=sub)
    assert "Error" not in _raises(tmp_path, "train")
    a = analyze_source(RV_BASE, base, workspace=Workspace(tmp_path))
    assert a.findings == []


# A base class's method using what a subclass in another file provides: `act` clamps in place what the abstract
# `compute` returns; the subclass's `compute` ends in `tanh`, which saved its output, so backward raises.
SUB_BASE = """\
import torch.nn as nn


class Model(nn.Module):
    def compute(self, states):
        raise NotImplementedError

    def act(self, states):
        actions = self.compute(states)
        actions.clamp_(-0.5, 0.5)
        return actions
"""

SUB_ACTOR = """\
import torch
import torch.nn as nn
from models.base import Model


class Actor(Model):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def compute(self, states):
        return torch.{last}(self.fc(states))
"""

SUB_RUN = "import torch\nfrom actor import Actor\n\nActor().act(torch.randn(4, 3)).sum().backward()\n"


def test_inherited_method_runs_on_a_subclass_in_another_file(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "base.py").write_text(SUB_BASE)
    (tmp_path / "actor.py").write_text(SUB_ACTOR.format(last="tanh"))
    (tmp_path / "run.py").write_text(SUB_RUN)
    assert "modified by an inplace operation" in _raises(tmp_path, "run")
    base = str(tmp_path / "models" / "base.py")
    (tmp_path / "run.py").unlink()  # no caller of `act`: only the subclass is evidence
    a = analyze_source(SUB_BASE, base, workspace=Workspace(tmp_path))
    assert _codes(a) == [("GS301", 10, "warning")]
    actor = str((tmp_path / "actor.py").resolve())
    assert [(r.line, r.message) for r in a.findings[0].related if r.path == actor] == [
        (12, "saved for backward by `torch.tanh`"), (6, "run on an instance of the subclass `Actor`")]
    assert analyze_source(SUB_BASE, base).findings == []
    # A subclass whose last op saves nothing of its output (`torch.relu` saves it too; a linear map does not).
    plain = SUB_ACTOR.format(last="nn.functional.linear").replace("self.fc(states))", "states, self.fc.weight)")
    (tmp_path / "actor.py").write_text(plain)
    (tmp_path / "run.py").write_text(SUB_RUN)
    assert "Error" not in _raises(tmp_path, "run")
    assert analyze_source(SUB_BASE, base, workspace=Workspace(tmp_path)).findings == []


def test_a_subclass_in_a_test_file_is_no_evidence(tmp_path):
    # The subclass of the test above, in a test folder: test code runs the base with stubs (a discriminator whose
    # `forward` returns `torch.ones(n)`), not as the program runs it, so nothing is reported from it.
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "base.py").write_text(SUB_BASE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "actor.py").write_text(SUB_ACTOR.format(last="tanh"))
    base = str(tmp_path / "models" / "base.py")
    assert analyze_source(SUB_BASE, base, workspace=Workspace(tmp_path)).findings == []
    (tmp_path / "tests" / "actor.py").rename(tmp_path / "actor.py")
    assert _codes(analyze_source(SUB_BASE, base, workspace=Workspace(tmp_path))) == [("GS301", 10, "warning")]



# A caller's loop calling a method of an object whose flag is fixed for its life (an SAC agent's
# `automatic_entropy_tuning`): with the flag unknown, one call's branch (`self.alpha = log_alpha.exp()`) mixed with the
# next call's other branch made a freed graph and a `torch.tensor(tensor)` out of correct code. Each value is its own run.
FLAG_AGENT = """\
import torch
import torch.nn as nn


class Agent:
    def __init__(self, tune):
        self.policy = nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.policy.parameters(), lr=0.1)
        self.alpha = 0.2
        self.tune = tune
        if self.tune:
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_opt = torch.optim.SGD([self.log_alpha], lr=0.1)

    def update(self, state):
        loss = (self.alpha * self.policy(state)).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        if self.tune:
            alpha_loss = -self.log_alpha.mean()
            self.alpha_opt.zero_grad()
            alpha_loss.backward()
            self.alpha_opt.step()
            self.alpha = self.log_alpha.exp()
            logs = self.alpha.clone()
        else:
            logs = torch.tensor(self.alpha)
        return logs.item()
"""

FLAG_MAIN = """\
import sys
import torch
from agent import Agent

agent = Agent(len(sys.argv) > 1)
for step in range(3):
    agent.update(torch.randn(4, 3))
"""


def test_a_callers_object_keeps_one_value_of_its_flag(tmp_path):
    (tmp_path / "agent.py").write_text(FLAG_AGENT)
    (tmp_path / "main.py").write_text(FLAG_MAIN)
    for args in ([], ["tune"]):
        proc = subprocess.run([sys.executable, "main.py", *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert analyze_source(FLAG_AGENT, str(tmp_path / "agent.py"), workspace=Workspace(tmp_path)).findings == []


GATHER_UTILS = """import torch
import torch.distributed as dist


def concat_all_gather(tensor):
    gathered = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor)
    return torch.cat(gathered, dim=0)
"""

GATHER_LOSS = """import torch.nn.functional as F

from .utils import concat_all_gather


def triplet_loss(embedding, targets):
    embedding = F.normalize(embedding, dim=1)
    all_embedding = concat_all_gather(embedding)
    all_targets = concat_all_gather(targets)
    dist_mat = all_embedding @ all_embedding.T
    loss = F.cross_entropy(dist_mat, all_targets)
    return loss
"""


def test_gather_helper_in_another_file_is_a_collective(tmp_path):
    # fast-reid's triplet loss (GS214): the helper in utils.py gathers into fresh buffers outside autograd; the
    # call on the embeddings is reported where it stands, the call on the labels is not.
    (tmp_path / "losses").mkdir()
    (tmp_path / "losses" / "__init__.py").write_text("")
    (tmp_path / "losses" / "utils.py").write_text(GATHER_UTILS)
    (tmp_path / "losses" / "triplet.py").write_text(GATHER_LOSS)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    ws = Workspace(tmp_path)
    path = str(tmp_path / "losses" / "triplet.py")
    found = [(f.code, f.line) for f in analyze_source(GATHER_LOSS, path, workspace=ws).findings]
    assert ("GS214", 8) in found and ("GS214", 9) not in found
    # With `@torch.no_grad()` on the helper (MoCo's keys), the gather is a constant on purpose.
    ws.set_overlay(str(tmp_path / "losses" / "utils.py"),
                   GATHER_UTILS.replace("def concat_all_gather", "@torch.no_grad()\ndef concat_all_gather"))
    assert "GS214" not in {f.code for f in analyze_source(GATHER_LOSS, path, workspace=ws).findings}
    # Without a workspace the helper is unknown: nothing is claimed.
    assert "GS214" not in {f.code for f in analyze_source(GATHER_LOSS, path).findings}
