"""Speculative reporting rounds: a loop's fixpoint round run with reporting on, its events, facts and call summaries
held back until the round turns out to confirm the fixpoint (then they are the reporting pass: the same body run
from the same head) or thrown away (it did not). Part of `Interpreter` (see interp.py and `LoopsMixin.loop`).

A round in reporting mode computes the same states as one without it, with one exception the loop code checks:
an inner loop's exit on the reporting pass joins its `break` states, off it only its head (`LoopsMixin.loop`). Where
that join changes an exit inside a speculative round, every speculative round around it is *tainted*: its states
are not those a round without reporting computes, so the loop throws it away, undoes the loop fixpoints and call
summaries it stored (`memo_undo`), and runs the round again without reporting."""

from __future__ import annotations

from typing import Optional

_MISSING = object()
# Index of the reporting flag in a call summary's memo key (`ObjectsMixin.run_function`).
REPORT_SLOT = 6


class Spec:
    """One speculative round's held-back results."""

    __slots__ = ("token", "events", "facts", "keys", "memo_undo", "tainted", "inplace_len", "dropped_len")

    def __init__(self, inplace_len: Optional[int], dropped_len: Optional[int]):
        self.token = object()  # the reporting flag of the call summaries this round stores (`report_token`)
        self.events: list = []  # events in the order they were emitted
        self.facts: list = []  # (span, the fact it replaced or None), in order
        self.keys: list = []  # call-summary memo keys stored under `token`
        self.memo_undo: list = []  # (container, key or None, old value / length) for the loop fixpoints stored
        self.tainted = False
        self.inplace_len = inplace_len  # length of the frame's `pending_inplace` list when the round began
        self.dropped_len = dropped_len


class SpeculateMixin:
    """Part of `Interpreter` (see interp.py)."""

    spec: list  # the open speculative rounds, innermost last

    def deliver(self, event) -> None:
        """Hand `event` to the rules, or hold it in the innermost speculative round."""
        if self.spec:
            self.spec[-1].events.append(event)
        else:
            self.emit_cb(event)

    def report_token(self):
        """The reporting flag of a call summary's memo key: False off the reporting pass, True on it, the innermost
        speculative round's token inside one."""
        if not self.reporting:
            return False
        return self.spec[-1].token if self.spec else True

    def summary_key(self, key: tuple) -> tuple:
        """`key` (made with `report_token`) or, inside speculative rounds, the same key under an enclosing round's
        token or the reporting pass's, where one is stored: its events were emitted (or are held) there already."""
        if not self.spec or key[REPORT_SLOT] is False or key in self.memo:
            return key
        for spec in reversed(self.spec[:-1]):
            other = key[:REPORT_SLOT] + (spec.token,) + key[REPORT_SLOT + 1:]
            if other in self.memo:
                return other
        other = key[:REPORT_SLOT] + (True,) + key[REPORT_SLOT + 1:]
        return other if other in self.memo else key

    def stored_summary(self, key: tuple) -> None:
        if self.spec and key[REPORT_SLOT] is self.spec[-1].token:
            self.spec[-1].keys.append(key)

    def note_fact(self, span, old) -> None:
        if self.spec:
            self.spec[-1].facts.append((span, old))

    def memo_store(self, key, value) -> None:
        """`self.memo[key] = value`, undoable while speculative rounds are open."""
        if self.spec:
            self.spec[-1].memo_undo.append((self.memo, key, self.memo.get(key, _MISSING)))
        self.memo[key] = value

    def memo_append(self, lst: list, value) -> None:
        if self.spec:
            self.spec[-1].memo_undo.append((lst, None, len(lst)))
        lst.append(value)

    def taint(self) -> None:
        for spec in self.spec:
            spec.tainted = True

    def begin_spec(self) -> Spec:
        spec = Spec(len(self.pending_inplace[-1]) if self.pending_inplace else None,
                    len(self.pending_dropped[-1]) if self.pending_dropped else None)
        self.spec.append(spec)
        return spec

    def drop_spec(self, spec: Spec) -> None:
        """Throw away a speculative round: its events, facts, call summaries held for reporting, the in-place
        writes and accumulations it held for its frame's end, and (when tainted) the loop fixpoints it stored."""
        assert self.spec and self.spec[-1] is spec
        self.spec.pop()
        facts = self.facts
        for span, old in reversed(spec.facts):
            if old is None:
                facts.pop(span, None)
            else:
                facts[span] = old
        for key in spec.keys:
            self.memo.pop(key, None)
            self.memo_exports.pop(key, None)
            self.memo_saves.pop(key, None)
        if spec.tainted:
            for box, key, old in reversed(spec.memo_undo):
                if key is None:
                    del box[old:]
                elif old is _MISSING:
                    box.pop(key, None)
                else:
                    box[key] = old
        elif self.spec:
            self.spec[-1].memo_undo.extend(spec.memo_undo)
        if spec.inplace_len is not None and self.pending_inplace:
            del self.pending_inplace[-1][spec.inplace_len:]
        if spec.dropped_len is not None and self.pending_dropped:
            del self.pending_dropped[-1][spec.dropped_len:]

    def close_spec(self, spec: Spec, first=None) -> None:
        """Keep a speculative round that confirmed its loop's fixpoint: `first` (the loop's event) then its events go
        to the enclosing round or the rules, its call summaries move to the enclosing token."""
        assert self.spec and self.spec[-1] is spec
        self.spec.pop()
        outer = self.spec[-1] if self.spec else None
        token = outer.token if outer is not None else True
        for key in spec.keys:
            new = key[:REPORT_SLOT] + (token,) + key[REPORT_SLOT + 1:]
            if key in self.memo:
                val = self.memo.pop(key)
                if new not in self.memo:
                    self.memo[new] = val
                    if key in self.memo_exports:
                        self.memo_exports[new] = self.memo_exports[key]
                    if key in self.memo_saves:
                        self.memo_saves[new] = self.memo_saves[key]
                    if outer is not None:
                        outer.keys.append(new)
            self.memo_exports.pop(key, None)
            self.memo_saves.pop(key, None)
        if first is not None:
            self.emit(first)
        for event in spec.events:
            self.deliver(event)
        if outer is not None:
            outer.facts.extend(spec.facts)
            outer.memo_undo.extend(spec.memo_undo)
