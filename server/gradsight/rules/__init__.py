"""The rule registry. Rules are discovered from the `gsNNN_*.py` modules of this package, never listed by hand."""

from __future__ import annotations

import functools
import importlib
import pkgutil

from .base import Rule


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("gs"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
                found.append(obj)
    return tuple(sorted(found, key=lambda r: r.code))


def get_rule(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code.upper() or rule.name == code:
            return rule
    return None


__all__ = ["Rule", "all_rules", "get_rule"]
