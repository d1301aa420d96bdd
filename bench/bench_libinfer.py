"""Cost of library inference (engine/libinfer.py): prints milliseconds per question, never asserts.

Builds a fake installed library in a temp dir whose factory returns an nn.Module subclass, then asks:
the first question (jedi import + reading torch's sources), a second statement, the same statement after an
edit elsewhere (cached), and the same after an import changed (asked again). Run: .venv/bin/python bench/bench_libinfer.py
"""

import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "server"))

from gradsight.engine.libinfer import LibraryInference  # noqa: E402

LIB = ("import torch\nimport torch.nn as nn\n\n\nclass Base(nn.Module):\n    pass\n\n\nclass Model(Base):\n"
       "    @classmethod\n    def from_pretrained(cls, name):\n        return cls()\n\n\n"
       "def make_opt(params):\n    return torch.optim.SGD(params, lr=0.1)\n")
SCRIPT = ("from fakelib import Model, make_opt\nmodel = Model.from_pretrained('x')\n"
          "opt = make_opt(model.parameters())\n")


def ms(f):
    t = time.perf_counter()
    r = f()
    return (time.perf_counter() - t) * 1000, r


def main():
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        (root / "site" / "fakelib").mkdir(parents=True)
        (root / "site" / "fakelib" / "__init__.py").write_text(LIB)
        path = str(root / "train.py")
        infer = LibraryInference(d, sys_path=[str(root / "site")])
        rows = [("first question (jedi import, torch sources)", lambda: infer.classify(SCRIPT, path, 2, 0)),
                ("second statement (optimizer factory)", lambda: infer.classify(SCRIPT, path, 3, 0)),
                ("same question after an edit elsewhere", lambda: infer.classify(SCRIPT + "x = 1\n", path, 2, 0)),
                ("after an import line changed", lambda: infer.classify("import os\n" + SCRIPT, path, 3, 0))]
        for label, f in rows:
            t, r = ms(f)
            print(f"{label:48s} {t:8.1f} ms  {r}")


if __name__ == "__main__":
    main()
