"""Transformer passes that visit only the part of the tree a transform can act on.

libcst's transformer visit rebuilds and re-validates every node of the module, whether or not a hook
runs on it: most of a pass is that rebuild. A transform acts only in its hooks, so:

- a subtree holding no node of a type the transform has a hook for comes back unchanged: it is not
  entered, and libcst keeps the original subtree;
- a subtree holding `visit_` hooks but no `leave_` hook (the hooks that can replace a node) cannot
  change either: its `visit_` hooks are called in libcst's order on the same original nodes, by a
  read-only walk that rebuilds nothing.

The result is the same tree (equal node for node) with the same hook calls in the same order; only
the rebuilt copies of untouched nodes are gone. A pass that changed nothing can then be told by
identity: when every `leave_` hook returned the node it was given, TFTransform.transform_wrapper
returns the module it was handed.
"""
from __future__ import annotations

from functools import lru_cache

import libcst as cst

from transforms.common.syntax import children

_BITS: dict[str, int] = {}
_TYPE_BITS: dict[type, int] = {}


def _bit(type_name: str) -> int:
    bit = _BITS.get(type_name)
    if bit is None:
        bit = _BITS[type_name] = 1 << len(_BITS)
    return bit


class SubtreeTypes:
    """For each node of one module: the node types its subtree holds (itself included), as a bit set."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module  # keeps the nodes alive, so that their ids stay theirs
        self._masks: dict[int, int] = {}
        self._fill(module)

    def _fill(self, node: cst.CSTNode) -> int:
        node_type = type(node)
        mask = _TYPE_BITS.get(node_type)
        if mask is None:
            mask = _TYPE_BITS[node_type] = _bit(node_type.__name__)
        for child in children(node):
            mask |= self._fill(child)
        self._masks[id(node)] = mask
        return mask

    def of(self, node: cst.CSTNode) -> int | None:
        """None for a node that is not in this module (one a hook built)."""
        return self._masks.get(id(node))


_LAST: list[SubtreeTypes] = []


def subtree_types(module: cst.Module) -> SubtreeTypes:
    """The module's SubtreeTypes; the transforms that run over one parse share it."""
    if not _LAST or _LAST[0].module is not module:
        _LAST[:] = [SubtreeTypes(module)]
    return _LAST[0]


def _own_attribute_names(cls: type) -> set[str]:
    """The attributes `cls` and its bases define outside libcst: libcst's visitor classes define a
    no-op stub for every hook name (some 1,600), which `dir()` would list and sort for every class."""
    return {name for klass in cls.__mro__ if klass.__module__.partition(".")[0] != "libcst"
            for name in vars(klass)}


@lru_cache(maxsize=None)
def hooked_types(cls: type) -> tuple[int, int]:
    """(types with any hook, types with a hook that may replace a node) of a transformer class, as
    bit sets. A field hook (`visit_Call_func`) counts its node type as both."""
    any_hook = leaving = 0
    for name in _own_attribute_names(cls):
        prefix, _, rest = name.partition("_")
        if prefix not in ("visit", "leave") or not rest[:1].isupper():
            continue
        function = getattr(cls, name, None)
        if function is None or getattr(function, "_is_no_op", False):
            continue
        type_name, _, field = rest.partition("_")
        bit = _bit(type_name)
        any_hook |= bit
        if prefix == "leave" or field:
            leaving |= bit
    return any_hook, leaving
