"""Bootstrap targets in RL agents written as plain classes (GS421): what the analysis sees when a method is analysed
on its own, with `self` known only from `__init__` (no module-level code calls it), and the syntax facts it rests on
(`engine/init_optimizers.py`); and advantages through a shared actor-critic network (GS422). The torch behaviour of
these shapes is checked by the rules' examples (`tests/test_rules_torch.py`)."""

from __future__ import annotations

import ast
import textwrap

from gradsight.analysis import analyze_source
from gradsight.engine.init_optimizers import init_optimizers

HEAD = textwrap.dedent("""\
    import copy

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Agent:
        def __init__(self, arch="mlp"):
            if arch == "mlp":
                self.q = nn.Linear(4, 2)
            else:
                self.q = nn.Sequential(nn.Linear(4, 2))
            self.q_target = copy.deepcopy(self.q)
            self.opt = torch.optim.Adam(self.q.parameters(), lr=1e-3)
            self.gamma = 0.99

    """)


def _method(body: str) -> str:
    return textwrap.indent(textwrap.dedent(body), "    ")


STEP = ("loss = F.mse_loss(self.q(s).gather(1, a).squeeze(1), y)\nself.opt.zero_grad()\nloss.backward()\n"
        "self.opt.step()\n")


def _learn(target: str) -> str:
    return _method("def learn(self, s, a, r, s2, done):\n" + textwrap.indent(textwrap.dedent(target) + STEP, "    "))


def _loud(code: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in analyze_source(code, "agent.py").findings
            if f.severity.value in ("warning", "error")]


def _line_of(code: str, text: str) -> int:
    return next(i for i, line in enumerate(code.splitlines(), 1) if text in line)


def test_online_network_bootstrap_value_is_flagged_without_a_caller():
    code = HEAD + _learn("q_next = self.q(s2).max(1)[0]\ny = r + self.gamma * q_next * (1 - done)\n")
    assert _loud(code) == [(_line_of(code, "q_next = self.q(s2)"), "GS421")]


def test_bootstrap_value_on_one_path_only_is_flagged_where_it_is_made():
    code = HEAD + _learn("if self.double:\n    q_next = self.q(s2).max(1)[0]\nelse:\n"
                         "    q_next = self.q_target(s2).detach().max(1)[0]\n"
                         "y = r + self.gamma * q_next * (1 - done)\n")
    assert _loud(code) == [(_line_of(code, "q_next = self.q(s2)"), "GS421")]


def test_model_rebuilt_by_a_loader_and_a_clone_built_with_type_self_keep_the_evidence():
    code = HEAD + _learn("q_next = self.q(s2).max(1)[0]\ny = r + self.gamma * q_next * (1 - done)\n") + "\n" + \
        _method("def load(self, path):\n    self.q = nn.Linear(4, 2)\n    self.q.load_state_dict(torch.load(path))\n"
                "\ndef clone(self):\n    other = type(self)()\n    other.q = copy.deepcopy(self.q)\n"
                "    other.opt = torch.optim.Adam(other.q.parameters(), lr=1e-3)\n    return other\n")
    assert _loud(code) == [(_line_of(code, "q_next = self.q(s2)"), "GS421")]


def test_semi_gradient_targets_are_quiet():
    for target in ("with torch.no_grad():\n    q_next = self.q(s2).max(1)[0]\ny = r + self.gamma * q_next * (1 - done)\n",
                   "q_next = self.q(s2).max(1)[0].detach()\ny = r + self.gamma * q_next * (1 - done)\n",
                   "if self.double:\n    with torch.no_grad():\n        q_next = self.q(s2).max(1)[0]\nelse:\n"
                   "    q_next = self.q_target(s2).detach().max(1)[0]\ny = r + self.gamma * q_next * (1 - done)\n",
                   # A consistency term (not a reward plus a scaled value): the gradient through both is meant.
                   "y = self.q(s2).gather(1, a).squeeze(1)\n"):
        assert _loud(HEAD + _learn(target)) == [], target


def test_target_network_value_is_gs418_not_gs421():
    code = HEAD + _learn("q_next = self.q_target(s2).max(1)[0]\ny = r + self.gamma * q_next * (1 - done)\n")
    assert [c for _, c in _loud(code)] == ["GS418"]


SAC = textwrap.dedent("""\
    import copy

    import torch
    import torch.nn.functional as F


    class SAC:
        def __init__(self, actor, critic, lr=3e-4):
            self.actor = actor
            self.critic = critic
            self.critic_target = copy.deepcopy(critic)
            self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=lr)
            self.alpha = 0.2

        def update(self, s, a, r, s2, d):
            with torch.no_grad():
                a2, logp2 = self.actor(s2)
            NEXT
            target = r + 0.99 * (1 - d) * (torch.min(q1_t, q2_t) - self.alpha * logp2)
            q1, q2 = self.critic(s, a)
            loss = F.mse_loss(q1, target) + F.mse_loss(q2, target)
            self.critic_opt.zero_grad()
            loss.backward()
            self.critic_opt.step()
    """)


def test_sac_target_from_the_online_critic_is_flagged_and_from_the_target_critic_under_no_grad_is_quiet():
    bug = SAC.replace("NEXT", "q1_t, q2_t = self.critic(s2, a2)")
    assert _loud(bug) == [(_line_of(bug, "target = r"), "GS421")]
    ok = SAC.replace("NEXT", "with torch.no_grad():\n            q1_t, q2_t = self.critic_target(s2, a2)")
    assert _loud(ok) == []


def _tables(src: str):
    tree = ast.parse(textwrap.dedent(src))
    cls = tree.body[0]
    return init_optimizers(cls, lambda n: "torch.optim.Adam" if ast.unparse(n) in ("Adam", "torch.optim.Adam")
                           else None)


def test_init_optimizers_pairs_a_model_built_in_init_branches_and_ignores_stores_into_other_objects():
    optimizers, models, init = _tables("""\
        class A:
            def __init__(self, mlp):
                if mlp:
                    self.q = Net()
                else:
                    self.q = Cnn()
                self.opt = Adam(self.q.parameters())

            def clone(self):
                other = type(self)(True)
                other.q = Net()
                other.opt = Adam(other.q.parameters())
                return other
        """)
    assert set(optimizers) == {"opt"} and set(models) == {"q"} and init is not None


def test_init_optimizers_keeps_a_model_rebuilt_elsewhere_as_trained_but_not_paired():
    optimizers, models, _ = _tables("""\
        class A:
            def __init__(self):
                self.q = Net()
                self.opt = Adam(self.q.parameters())

            def load(self, ckpt):
                self.q = Net(**ckpt)
        """)
    assert optimizers == {} and set(models) == {"q"}
    optimizers, models, init = _tables("""\
        class A:
            def __init__(self):
                self.q = Net()
                self.opt = Adam(self.q.parameters())

            def reset(self):
                self.q = None
        """)
    assert optimizers == {} and models == {} and init is None
    optimizers, models, _ = _tables("""\
        class A:
            def __init__(self):
                self.q = Net()
                self.opt = Adam(self.q.parameters())

            def swap(self):
                me = self
                me.opt = None
        """)
    assert optimizers == {} and models == {}  # the optimizer may be replaced: nothing is known


def test_init_optimizers_reads_params_keyword():
    optimizers, models, _ = _tables("""\
        class A:
            def __init__(self, agent):
                self.agent = agent
                self.agent = self.agent.to("cpu")
                self.optim = Adam(params=self.agent.parameters(), lr=1e-3)
        """)
    assert optimizers == {"optim": ("agent", "Adam", optimizers["optim"][2])} and set(models) == {"agent"}


MODULE_AGENT = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class DQNAgent(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
            self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

        def learn(self, s, a, r, s2, done):
            NEXT
            y = r + 0.99 * q_next * (1 - done)
            loss = F.smooth_l1_loss(self.q(s).gather(1, a).squeeze(1), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
    """)


def test_module_agent_whose_init_builds_the_optimizer_over_its_own_parameters():
    bug = MODULE_AGENT.replace("NEXT", "q_next = self.q(s2).max(1)[0]")
    assert _loud(bug) == [(_line_of(bug, "q_next = self.q(s2)"), "GS421")]
    ok = MODULE_AGENT.replace("NEXT", "q_next = self.q(s2).max(1)[0].detach()")
    assert _loud(ok) == []


def test_the_finding_goes_where_the_selected_value_was_made():
    code = HEAD.replace("class Agent:", "class Agent:  # noqa") + _learn(
        "next_q = self.q(s2)\ny = r + self.gamma * (1 - done) * next_q.max(1)[0]\n")
    assert _loud(code) == [(_line_of(code, "next_q = self.q(s2)"), "GS421")]


SIDE_EFFECT = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    net = nn.Linear(4, 2)
    policies, values = [], []
    for _ in range(3):
        x = torch.randn(1, 4)
        [arr.append(el) for arr, el in zip((policies, values), (net(x), net(x).sum()))]
    a = values[0]
    raised = False
    try:
        a.numpy()
    except RuntimeError:
        raised = True
    """)


def test_side_effect_comprehension_fills_the_lists_it_names():
    ns: dict = {}
    exec(compile(SIDE_EFFECT, "side.py", "exec"), ns)  # torch: the appended value keeps its graph
    assert ns["raised"] and ns["values"][0].requires_grad
    facts = {(f.line, f.name): f.summary for f in analyze_source(SIDE_EFFECT, "side.py").facts}
    assert facts[(_line_of(SIDE_EFFECT, "a = values[0]"), "a")].startswith("requires grad")


# GS422 without an optimizer in view (`engine/interp_dists.py`, `advantage-of-network`): a worker's actor-critic.
AC = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 16)
            self.pi = nn.Linear(16, 2)
            self.v = nn.Linear(16, 1)

        def forward(self, x):
            h = torch.relu(self.body(x))
            return F.softmax(self.pi(h), dim=1), self.v(h)


    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.pi = nn.Linear(4, 2)

        def forward(self, x):
            return F.softmax(self.pi(x), dim=1)


    def update(model, actor, critic, s, a, ret, rho):
    """)


def _gs422(body: str) -> list[int]:
    code = AC + textwrap.indent(textwrap.dedent(body), "    ")
    code += "\n\nupdate(ActorCritic(), Actor(), nn.Linear(4, 1), torch.randn(8, 4), torch.randint(0, 2, (8, 1)), " \
            "torch.randn(8, 1), torch.rand(8, 1))\n"
    return [f.line for f in analyze_source(code, "ac.py").findings if f.code == "GS422"]


def test_advantage_through_the_shared_actor_critic_is_flagged_on_the_weighted_policy_term():
    # ACER's term: an importance weight with a graph times the log-probability times the advantage; the finding
    # stands on the term (where `.detach()` goes), not on `adv = ...`.
    lines = _gs422("""\
        policy, value = model(s)
        log_prob = policy.gather(1, a).log()
        w = (rho * policy.gather(1, a)).clamp(max=10.0)
        adv = ret - value
        loss = -(w * log_prob * adv).mean() + (ret - value).pow(2).mean()
        loss.backward()
        """)
    assert lines == [32]


def test_separate_actor_and_critic_without_an_optimizer_in_view_are_left_alone():
    # Nothing says the critic is trained, and the policy does not run through it: no evidence.
    assert _gs422("""\
        policy = actor(s)
        log_prob = policy.gather(1, a).log()
        adv = ret - critic(s)
        loss = -(log_prob * adv).mean()
        loss.backward()
        """) == []
