"""Graphs a call writes into the caller's tensors: `helper(buf, loss)` whose body does `buf[mask] = loss[mask]`.

An in-place write (`t[i] = v`, `t.copy_(v)`, ...) of a value with a graph, in grad mode, into a tensor without one
gives that tensor history (CopySlices), whichever frame the write is in. Within one frame the interpreter sees it;
across a call it did not: the callee's parameter changed, the caller's reference kept its old value. Each call frame
records the storages (`TensorVal.storage`, the heap cell, docs/heap.md) it gave a graph this way (`call_writes`,
kept with the call's memo entry); when the call returns, the caller's references to those storages have the graph
too, and so on up the call stack. Only storages: a tensor the callee allocated itself is no reference of the
caller's. In a loop that calls backward, a buffer bound before the loop and handed to such a call is a running
record of every step's graph (GS404's "write"), reported on the call, the statement that hands it over.
"""

from __future__ import annotations

import ast

from .state import State
from .values import TensorVal, Tri

WRITE_OPS = frozenset({"__setitem__", "copy_", "index_copy_", "masked_scatter_", "index_put_"})


def note_write(interp, target_node: ast.AST, target: TensorVal, op: str, rhs, state: State, stmt: ast.AST) -> None:
    """Inside a call frame: `target` (no graph, or maybe one: a loop's earlier round may have written one) surely
    has one now, from `rhs`, by an in-place write."""
    if not interp.call_writes or op not in WRITE_OPS or state.grad is not Tri.YES or target.rg is Tri.YES \
            or target.storage is None or target.param:
        return
    val = next((v for v in rhs if isinstance(v, TensorVal) and v.rg is Tri.YES and v.leaf is Tri.NO), None)
    if val is None:
        return
    interp.call_writes[-1].append((target.storage, val))


def written_in_call(interp, writes: tuple, node: ast.AST, state: State, stmt) -> None:
    """The caller's side of `call_writes`: its references to a storage the call wrote a graph into have that
    graph (also where a loop's earlier round already may have given it one: `rg` maybe at the loop head); an
    argument among them that a loop with backward keeps is checked as a write (`check_accumulate`) on `stmt`, the
    caller's statement that made the call."""
    if not writes:
        return
    if interp.call_writes:
        interp.call_writes[-1].extend(writes)
    by_storage: dict = {}
    for storage, val in writes:
        by_storage.setdefault(storage, val)
    args = {}
    if isinstance(node, ast.Call):
        for a in list(node.args) + [k.value for k in node.keywords]:
            if isinstance(a, ast.Name):
                args.setdefault(a.id, a)
    hit = []
    for k, v in list(state.env.items()):
        if not isinstance(v, TensorVal) or v.rg is Tri.YES or v.param or v.is_data or v.storage not in by_storage:
            continue
        state.env[k] = v.with_(rg=Tri.YES, leaf=Tri.NO, nograd=None, saved=None)
        if k in args:
            hit.append((args[k], by_storage[v.storage]))
    if not hit or not interp.loops or stmt is None:
        return
    for arg, val in hit:
        interp.check_accumulate(stmt, arg, val, node, state, "write")
