"""GS370: a function rewrites its argument in place with a value from an op that saved it (`x /= torch.norm(x)`).

The raising shapes were run under torch 2.13 through the rule's own INVALID examples (test_rules_torch.py); these
programs check what the matcher takes and leaves, with no visible caller (the shape of library functions)."""

from gradsight.analysis import analyze_source

HEAD = "import torch\n\n\n"


def _lines(code: str, rule: str = "GS370"):
    return [f.line for f in analyze_source(code, "example.py").findings if f.code == rule]


def test_norm_then_divide_through_an_unknown_helper():
    # torchmetrics' pairwise cosine: the arguments come back from a validating helper of another module.
    code = ("import torch\nfrom .helpers import _check_input\n\n\n"
            "def _update(x, y=None, zero_diagonal=None):\n"
            "    x, y, zero_diagonal = _check_input(x, y, zero_diagonal)\n"
            "    norm = torch.norm(x, p=2, dim=1)\n"
            "    x /= norm.unsqueeze(1)\n"
            "    norm = torch.norm(y, p=2, dim=1)\n"
            "    y /= norm.unsqueeze(1)\n"
            "    distance = x @ y.T\n"
            "    if zero_diagonal:\n"
            "        distance.fill_diagonal_(0)\n"
            "    return distance\n")
    assert _lines(code) == [8, 10]


def test_taint_through_a_derived_name_and_inline():
    code = HEAD + ("def scaled(x, eps):\n"
                   "    s = x.std(0)\n"
                   "    d = s + eps\n"
                   "    x -= x.mean(0)\n"
                   "    x /= d\n"
                   "    return x.sum()\n\n\n"
                   "def noisy(c, scale):\n"
                   "    c += torch.randn_like(c) * c.std(0) * scale\n"
                   "    return c.mean()\n")
    assert _lines(code) == [8, 13]


def test_helper_that_returns_copies_is_quiet():
    # A helper this file defines that hands back new tensors: the writes go into the function's own copies.
    code = HEAD + ("def _prep(x, y):\n"
                   "    return x.float() / 255, y\n\n\n"
                   "def f(x, y):\n"
                   "    x, y = _prep(x, y)\n"
                   "    x /= x.norm()\n"
                   "    return x @ y\n")
    assert _lines(code) == []


def test_quiet_shapes():
    code = HEAD + (
        # Value-picking reductions save indices, not the input.
        "def stable(x):\n"
        "    m = x.max(dim=1, keepdim=True)[0]\n"
        "    x -= m\n"
        "    return x.exp().sum()\n\n\n"
        # The saved value only feeds `.item()`: its graph dies at once.
        "def clip(g, max_norm):\n"
        "    n = g.norm().item()\n"
        "    g *= max_norm / n\n"
        "    return n\n\n\n"
        # In place by name.
        "def normalize_(x):\n"
        "    x /= x.norm()\n"
        "    return None\n\n\n"
        # Rebound before the write: the function's own tensor.
        "def g(x):\n"
        "    x = x * 1.0\n"
        "    x /= x.norm()\n"
        "    return x.sum()\n\n\n"
        # A custom Function's forward runs without grad.
        "class Fn(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        n = x.norm()\n"
        "        x /= n\n"
        "        return x.clone()\n\n\n"
        # Decorated with no_grad.
        "@torch.no_grad()\n"
        "def renorm(w):\n"
        "    n = w.norm()\n"
        "    w /= n\n"
        "    return n\n")
    assert _lines(code) == []


def test_slice_of_argument_written_in_place():
    # deepxde's feature transform, handed to a library and never called in the file.
    code = ("import numpy as np\nimport torch\n\nsin, cos, concat = torch.sin, torch.cos, torch.cat\n\n\n"
            "def periodic(x):\n"
            "    x, t = x[:, :1], x[:, 1:]\n"
            "    x *= 2 * np.pi\n"
            "    return concat([cos(x), sin(x), t], 1)\n\n\n"
            "def first(x):\n"
            "    x = x[..., 0:1]\n"
            "    x.clamp_(min=0)\n"
            "    return x.sum()\n")
    assert _lines(code, "GS371") == [9, 15]


def test_slice_quiet_on_lists_dicts_items_and_branches():
    code = HEAD + (
        # A list sliced (copies) and a dict item (pyg's `parse_off`, DI-engine's bots).
        "def parse(src, data):\n"
        "    if src[0] == 'OFF':\n"
        "        src = src[1:]\n"
        "    else:\n"
        "        src[0] = src[0][3:]\n"
        "    data = data['raw_obs']\n"
        "    data['score'] = torch.stack(data['score'], dim=-1)\n"
        "    return len(src)\n\n\n"
        # An item write into a part of the slice: a buffer updated on purpose (S4's `power`).
        "def power(A, v):\n"
        "    w = A @ v[..., 2:]\n"
        "    v = v[..., :2]\n"
        "    v[..., :1] = v[..., :1] + w\n"
        "    return v.squeeze(-1)\n\n\n"
        # Rebound in one branch, written in the other.
        "def branch(x, flag):\n"
        "    if flag:\n"
        "        x = x[:, :1]\n"
        "    else:\n"
        "        x *= 2\n"
        "    return x.sum()\n\n\n"
        # Annotated as something else.
        "def ints(x: list, k):\n"
        "    x = x[:, :k]\n"
        "    x *= 2\n"
        "    return sum(x)\n")
    assert _lines(code, "GS371") == []


def test_slice_quiet_shapes():
    code = HEAD + (
        # Rebound again out of place before the write.
        "def f(x):\n"
        "    x = x[:, :1]\n"
        "    x = x * 2\n"
        "    x *= 3\n"
        "    return x.sum()\n\n\n"
        # An advanced index copies.
        "def g(x, idx):\n"
        "    x = x[idx]\n"
        "    x *= 2\n"
        "    return x.sum()\n\n\n"
        # Filled on purpose (an output slice).
        "def h(x):\n"
        "    x = x[:, :1]\n"
        "    x.zero_()\n"
        "    return None\n\n\n"
        # Under no_grad.
        "def k(x):\n"
        "    x = x[:, :1]\n"
        "    with torch.no_grad():\n"
        "        x *= 2\n"
        "    return x.sum()\n")
    assert _lines(code, "GS371") == []
