"""The abstract state at a program point: values of references, and the grad mode.

References are string keys in pyright's style: `x`, `self.fc`, `batch["x"]`. Rebinding `x` forgets every
key below it (`x.y`, `x[0]`), since the old object is no longer what those keys name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .values import Fact, Tri, Value, join_values


@dataclass
class State:
    env: dict[str, Value] = field(default_factory=dict)
    grad: Tri = Tri.YES  # grad mode enabled?
    grad_why: Optional[Fact] = None  # the `torch.no_grad()` / `set_grad_enabled(False)` that disabled it
    inference: bool = False
    dead: bool = False  # after return/raise/break/continue: this path contributes nothing to joins

    def copy(self) -> "State":
        return State(dict(self.env), self.grad, self.grad_why, self.inference, self.dead)

    def get(self, key: str) -> Optional[Value]:
        return self.env.get(key)

    def set(self, key: str, value: Value) -> None:
        prefix_dot, prefix_sub = key + ".", key + "["
        for k in [k for k in self.env if k.startswith(prefix_dot) or k.startswith(prefix_sub)]:
            del self.env[k]
        self.env[key] = value

    def join(self, other: "State") -> "State":
        if self.dead:
            return other.copy()
        if other.dead:
            return self.copy()
        env: dict[str, Value] = {}
        for key in self.env.keys() | other.env.keys():
            val = join_values(self.env.get(key), other.env.get(key))
            if val is not None:
                env[key] = val
        grad = self.grad.join(other.grad)
        return State(env, grad, self.grad_why or other.grad_why, self.inference and other.inference)

    def same(self, other: "State") -> bool:
        return self.dead == other.dead and self.grad == other.grad and self.env == other.env
