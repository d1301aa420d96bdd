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
    # Keys with a `.` or `[` (attributes and items): the only ones a rebinding has to forget. Kept apart so
    # `set` does not scan the whole environment (module scopes hold hundreds of names).
    compound: set = field(default_factory=set)

    def copy(self) -> "State":
        return State(dict(self.env), self.grad, self.grad_why, self.inference, self.dead, set(self.compound))

    def get(self, key: str) -> Optional[Value]:
        return self.env.get(key)

    def set(self, key: str, value: Value) -> None:
        if self.compound:
            prefix_dot, prefix_sub = key + ".", key + "["
            stale = [k for k in self.compound if k.startswith(prefix_dot) or k.startswith(prefix_sub)]
            for k in stale:
                self.env.pop(k, None)
                self.compound.discard(k)
        if "." in key or "[" in key:
            self.compound.add(key)
        self.env[key] = value

    def forget(self, key: str) -> None:
        """`del key`: the reference and every key below it are gone."""
        self.env.pop(key, None)
        self.compound.discard(key)
        if self.compound:
            prefix_dot, prefix_sub = key + ".", key + "["
            for k in [k for k in self.compound if k.startswith(prefix_dot) or k.startswith(prefix_sub)]:
                self.env.pop(k, None)
                self.compound.discard(k)

    def weak_items(self, key: str, value: Value) -> None:
        """`key[k] = value` at a key `k` that is not a constant: any known item `key["a"]` may be the one it wrote,
        so each becomes the join of its value and `value` (a weak update)."""
        prefix = key + "["
        for k in [k for k in self.compound if k.startswith(prefix)]:
            old = self.env.get(k)
            if old is not None and old is not value:
                self.env[k] = join_values(old, value)

    def join(self, other: "State") -> "State":
        if self.dead:
            return other.copy()
        if other.dead:
            return self.copy()
        env: dict[str, Value] = {}
        mine, theirs = self.env, other.env
        for key, val in mine.items():
            b = theirs.get(key)
            if b is not None and b is not val:
                val = join_values(val, b)
            if val is not None:
                env[key] = val
        for key, val in theirs.items():
            if key not in mine and val is not None:
                env[key] = val
        grad = self.grad.join(other.grad)
        compound = {k for k in (self.compound | other.compound) if k in env}
        return State(env, grad, self.grad_why or other.grad_why, self.inference and other.inference, False, compound)

    def same(self, other: "State") -> bool:
        return self.dead == other.dead and self.grad == other.grad and self.env == other.env
