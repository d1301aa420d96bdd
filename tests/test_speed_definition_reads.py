"""Keystroke speed without changing results (issue 12): this file's definitions are keyed by the file's outline
(`Digests.outline`), not its module-level code, and a cached result is reused while the module-level values its run
looked up are the same. Editing module-level data that no definition reads re-runs none of them; editing a value a
definition reads (a constant, a rebinding of a function or class, an object built at module level) re-runs it, and
warm results equal cold ones."""

from gradsight import analysis
from gradsight.engine.engine import Engine

HEAD = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def forward(self, x):\n"
        "        return torch.sigmoid(self.fc(x))\n\n\nclass Plain(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def forward(self, x):\n"
        "        return self.fc(x)\n\n\ndef keep(t):\n    return t * 2\n\n\ndef cut(t):\n    return t.detach()\n\n\n")
SRC = HEAD + ("GRAD = True\nHELPER = keep\nLAYER = Net\nCFGS = {\n    'a': dict(url='x', n=3),\n"
              "    'b': dict(url='y', n=4),\n}\n\n\ndef leaf():\n    x = torch.randn(3, requires_grad=True)\n"
              "    with torch.set_grad_enabled(GRAD):\n        y = x * 2\n    y.sum().backward()\n\n\ndef train():\n"
              "    x = torch.randn(3, 2, requires_grad=True)\n"
              "    loss = HELPER(x).sum()\n    loss.backward()\n\n\ndef layer():\n    m = LAYER()\n"
              "    y = m(torch.randn(3, 2))\n    y.mul_(2)\n    y.sum().backward()\n")


def codes(a) -> list:
    return sorted((f.code, f.line) for f in a.findings)


def full(a) -> tuple:
    return [f.to_json() for f in a.findings], [(f.line, f.summary) for f in a.facts], a.problems


def warm_cold(e: Engine, text: str, path: str) -> tuple:
    before = e.stats["units_run"]
    warm = e.analyze(text, path, rules=analysis.RULES)
    ran = e.stats["units_run"] - before
    assert full(warm) == full(Engine().analyze(text, path, rules=analysis.RULES))
    return warm, ran


def test_edit_of_data_no_definition_reads_runs_none():
    e = Engine()
    e.analyze(SRC, "defreads.py", rules=analysis.RULES)
    for edited in (SRC.replace("n=3", "n=5"), SRC.replace("    'b': dict(url='y', n=4),\n", "    # 'b'\n"), SRC):
        _, ran = warm_cold(e, edited, "defreads.py")
        assert ran == 0


def test_edit_of_a_value_a_definition_reads_runs_it_again():
    e = Engine()
    first = e.analyze(SRC, "defreads.py", rules=analysis.RULES)
    assert ("GS301", 56) in codes(first)  # the in-place write on Net's sigmoid output
    for old, new in (("GRAD = True", "GRAD = False"), ("HELPER = keep", "HELPER = cut"),
                     ("LAYER = Net", "LAYER = Plain"), ("HELPER = keep\n", "HELPER = keep\nHELPER = cut\n")):
        edited = SRC.replace(old, new)
        warm, ran = warm_cold(e, edited, "defreads.py")
        assert 1 <= ran < 4
        assert codes(warm) != codes(first)
        back, _ = warm_cold(e, SRC, "defreads.py")  # and back (the earlier version of the unit is kept)
        assert codes(back) == codes(first)


def test_edit_of_a_function_a_value_holds_runs_its_readers():
    e = Engine()
    e.analyze(SRC, "defreads.py", rules=analysis.RULES)
    warm_cold(e, SRC.replace("    return t * 2\n", "    return t.detach() * 2\n"), "defreads.py")


def test_lines_added_above_move_results_and_values():
    """A line above everything: module-level values made at a moved line are other values (positions), results of
    definitions that read none are moved; warm equals cold either way."""
    e = Engine()
    src = SRC + "\n\nMODEL = Net()\n\n\ndef use():\n    y = MODEL(torch.randn(3, 2))\n    y.mul_(2)\n"
    e.analyze(src, "defreads.py", rules=analysis.RULES)
    for edited in ("\n" + src, "# x\n\n" + src, src.replace("GRAD = True\n", "GRAD = True\nEXTRA = 1\n"), src):
        warm_cold(e, edited, "defreads.py")


def test_module_level_no_grad_call_and_attribute_store():
    e = Engine()
    e.analyze(SRC, "defreads.py", rules=analysis.RULES)
    for tail in ("\nwith torch.no_grad():\n    leaf()\n", "\nNet.scale = 2\n", "\nsetattr(Net, 'scale', 2)\n"):
        warm_cold(e, SRC + tail, "defreads.py")
        warm_cold(e, SRC, "defreads.py")
