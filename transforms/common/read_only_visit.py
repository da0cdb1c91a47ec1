"""libcst's visit for read-only visitors, without rebuilding the tree.

`CSTNode.visit` rebuilds and re-validates every node it passes, and for a `CSTVisitor` (which cannot
change anything) it then throws the copies away and returns the node it was called on; libcst's
source says so ("TODO: provide traversal where children are not replaced"). Its metadata providers
are such visitors: scopes, expression contexts and parents are each a whole visit of the module,
after every transform that changed the code.

`install()` makes `CSTNode.visit` walk a `CSTVisitor` through the same fields in the same order
(see syntax.child_fields), calling the same hooks (`on_visit`, `on_visit_attribute`,
`on_leave_attribute`, `on_leave`) on the same nodes, and return the node itself, as libcst's does.
Transformers keep libcst's visit unchanged.
"""
from __future__ import annotations

import libcst as cst
from libcst._nodes.base import CSTNode

from transforms.common.syntax import child_fields, is_node_type

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


def _visit(self: CSTNode, visitor):
    if isinstance(visitor, cst.CSTVisitor):
        _walk(self, visitor)
        return self
    return LIBCST_VISIT(self, visitor)


def install() -> None:
    """Use the read-only walk for every CSTVisitor in this process (idempotent)."""
    CSTNode.visit = _visit


def uninstall() -> None:
    CSTNode.visit = LIBCST_VISIT
