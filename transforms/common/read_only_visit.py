"""libcst's visit for read-only visitors, without rebuilding the tree.

`CSTNode.visit` rebuilds and re-validates every node it passes, and for a `CSTVisitor` (which cannot
change anything) it then throws the copies away and returns the node it was called on; libcst's
source says so ("TODO: provide traversal where children are not replaced"). Its metadata providers
are such visitors: scopes, expression contexts and parents are each a whole visit of the module,
after every transform that changed the code.

`install()` makes `CSTNode.visit` walk a `CSTVisitor` through the same fields in the same order
(see syntax.child_fields), calling the same hooks (`on_visit`, `on_visit_attribute`,
`on_leave_attribute`, `on_leave`) on the same nodes, and return the node itself, as libcst's does;
a visitor whose field hooks (`visit_<Type>_<field>`) are all libcst's do-nothing stubs is not asked
for them. Transformers keep libcst's visit unchanged.
"""
from __future__ import annotations

from weakref import WeakKeyDictionary

import libcst as cst
from libcst._batched_visitor import _BatchedCSTVisitor
from libcst._nodes.base import CSTNode

from transforms.common.dispatch import FastDispatch
from transforms.common.syntax import child_fields, is_node_type, scan

#: libcst's own visit (tests compare against it).
LIBCST_VISIT = CSTNode.visit


def _walk(node: CSTNode, visitor: cst.CSTVisitor) -> None:
    if visitor.on_visit(node):
        for field in child_fields(node):
            visitor.on_visit_attribute(node, field)
            value = getattr(node, field)
            value_type = type(value)
            if is_node_type(value_type):
                _walk(value, visitor)
            elif value is not None and value_type is not cst.MaybeSentinel:
                for child in value:  # a sequence of nodes
                    _walk(child, visitor)
            visitor.on_leave_attribute(node, field)
    visitor.on_leave(node)


_STUB_FIELD_DISPATCH = (cst.CSTVisitor.on_visit_attribute, cst.CSTVisitor.on_leave_attribute,
                        FastDispatch.on_visit_attribute, FastDispatch.on_leave_attribute)


def _has_field_hooks(visitor: cst.CSTVisitor) -> bool:
    """Whether the visitor's on_visit_attribute / on_leave_attribute can do anything."""
    if isinstance(visitor, _BatchedCSTVisitor):  # libcst's metadata providers, run together
        return any(name.count("_") > 1 for name in visitor.visitor_methods)  # visit_<Type>_<field>
    cls = type(visitor)
    if cls.on_visit_attribute not in _STUB_FIELD_DISPATCH or cls.on_leave_attribute not in _STUB_FIELD_DISPATCH:
        return True
    return _defines_field_hooks(cls)


def _defines_field_hooks(cls: type) -> bool:
    """Whether the class has a real `visit_<Type>_<field>` / `leave_<Type>_<field>` hook (a class
    that overrides a base's real hook with a no-op counts as having one: the slower walk is right for
    it too). Remembered weakly, per class of the MRO: visitors are often classes made afresh by each
    call of the function that defines them, and only their own few names need looking at."""
    known = _FIELD_HOOKS.get(cls)
    if known is None:
        known = _FIELD_HOOKS[cls] = any(_own_field_hooks(klass) for klass in cls.__mro__)
    return known


def _own_field_hooks(klass: type) -> bool:
    known = _FIELD_HOOKS_OWN.get(klass)
    if known is None:
        known = _FIELD_HOOKS_OWN[klass] = any(
            name.startswith(("visit_", "leave_")) and name[6:7].isupper() and name.count("_") > 1
            and not getattr(value, "_is_no_op", False) for name, value in vars(klass).items())
    return known


_FIELD_HOOKS: WeakKeyDictionary[type, bool] = WeakKeyDictionary()
_FIELD_HOOKS_OWN: WeakKeyDictionary[type, bool] = WeakKeyDictionary()


def _visit(self: CSTNode, visitor):
    if isinstance(visitor, cst.CSTVisitor):
        if _has_field_hooks(visitor):
            _walk(self, visitor)
        else:
            scan(self, visitor)  # its field hooks are all libcst's do-nothing stubs
        return self
    return LIBCST_VISIT(self, visitor)


def install() -> None:
    """Use the read-only walk for every CSTVisitor in this process (idempotent)."""
    CSTNode.visit = _visit
