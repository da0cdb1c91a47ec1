"""Visitor dispatch that calls the same hooks as libcst's, with one lookup per class and node type.

libcst's CSTVisitor and CSTTransformer find a node's hooks by name on every visit:
`getattr(self, f"visit_{type(node).__name__}")`, and for every child field of every node
`visit_<Type>_<field>` and `leave_<Type>_<field>` as well. The lookups always succeed, since libcst's
typed base classes define a do-nothing stub (marked `_is_no_op`) for each of its ~1,600 hook names, so
every node costs a handful of string formats, attribute lookups and empty calls: about a fifth of a
transform pass. `FastDispatch` resolves each hook once per (class, node type[, field]), remembers
whether it is a real one or a stub, and calls only the real ones, exactly as libcst would.

Put it before the libcst base class: `class T(FastDispatch, cst.CSTTransformer)`. Hooks are class
methods as usual (a hook set on an instance is not seen).
"""
from __future__ import annotations

from typing import Any

_NO_HOOK = None
_CACHES: dict[type, dict[tuple, str | None]] = {}


def _hook(cls: type, prefix: str, node_type: type, field: str | None = None) -> str | None:
    """The name of `cls`'s real hook `<prefix><NodeType>[_<field>]`, or None when there is only a stub."""
    cache = _CACHES.get(cls)
    if cache is None:
        cache = _CACHES[cls] = {}
    key = (prefix, node_type, field)
    try:
        return cache[key]
    except KeyError:
        pass
    name = f"{prefix}{node_type.__name__}" if field is None else f"{prefix}{node_type.__name__}_{field}"
    found = name if is_real_hook(getattr(cls, name, None)) else _NO_HOOK
    cache[key] = found
    return found


def is_real_hook(function: object) -> bool:
    """Whether a class attribute found under a hook's name is a hook of its own, not libcst's stub."""
    return function is not None and not getattr(function, "_is_no_op", False)


class FastDispatch:
    """Mixin for libcst visitors and transformers (see the module docstring)."""

    def on_visit(self, node: Any) -> bool:
        name = _hook(type(self), "visit_", type(node))
        if name is None:
            return True
        return getattr(self, name)(node) is not False

    def on_leave(self, original_node: Any, updated_node: Any = None) -> Any:
        """CSTTransformer.on_leave(original, updated) -> node; CSTVisitor.on_leave(original) -> None."""
        name = _hook(type(self), "leave_", type(original_node))
        if updated_node is None:  # a visitor: the tree is not rebuilt
            if name is not None:
                getattr(self, name)(original_node)
            return None
        return updated_node if name is None else getattr(self, name)(original_node, updated_node)

    def on_visit_attribute(self, node: Any, attribute: str) -> None:
        name = _hook(type(self), "visit_", type(node), attribute)
        if name is not None:
            getattr(self, name)(node)

    def on_leave_attribute(self, original_node: Any, attribute: str) -> None:
        name = _hook(type(self), "leave_", type(original_node), attribute)
        if name is not None:
            getattr(self, name)(original_node)
