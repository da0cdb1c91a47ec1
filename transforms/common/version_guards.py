"""Code that only runs on a TensorFlow which has a name, or which lacks one.

Programs written across TensorFlow releases guard the name that changed:

    try:
        deconv = tf.nn.conv2d_transpose(...)
    except AttributeError:          # TensorFlow before 0.7
        deconv = tf.nn.deconv2d(...)

    if "concat_v2" in dir(tf):
        return tf.concat_v2(tensors, axis)

A name missing from the installed TensorFlow in such a fallback is never reached on it: the handler
runs only if the try body failed (and a name the try body lacks is judged there), the guarded body
only where the name exists. `VersionGuards` is a visitor mixin that tracks these regions, so the
checks of missing names (TFM107, the level of a file) can leave them out.
"""
from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

# Exceptions a missing attribute, module or name raises.
_MISSING_NAME_ERRORS = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError", "NameError"})


def catches_missing_names(handler: cst.ExceptHandler) -> bool:
    """`except AttributeError:` or a tuple of such exceptions, bare or bound (`as error`)."""
    if handler.type is None:
        return False
    caught = handler.type
    types = [element.value for element in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
    return bool(types) and all(get_full_name_for_node(type_) in _MISSING_NAME_ERRORS for type_ in types)


def guarded_attribute(test: cst.BaseExpression) -> tuple[str, str] | None:
    """(object, attribute) an `if` test checks exists: `"x" in dir(tf)` or `hasattr(tf, "x")`."""
    if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.In)
            and isinstance(test.left, cst.SimpleString)):
        container = test.comparisons[0].comparator
        if (isinstance(container, cst.Call) and get_full_name_for_node(container.func) == "dir"
                and len(container.args) == 1):
            return _spelled(container.args[0].value, test.left)
    if isinstance(test, cst.Call) and get_full_name_for_node(test.func) == "hasattr" and len(test.args) == 2:
        attribute = test.args[1].value
        if isinstance(attribute, cst.SimpleString):
            return _spelled(test.args[0].value, attribute)
    return None


def _spelled(owner: cst.BaseExpression, attribute: cst.SimpleString) -> tuple[str, str] | None:
    name = get_full_name_for_node(owner)
    value = attribute.evaluated_value
    return (name, value) if name and isinstance(value, str) else None


class VersionGuards:
    """Mixin for a CSTVisitor (listed before it): `in_version_fallback(node)` tells whether a name
    reference lies in a handler of missing names, or is the attribute an enclosing `if` checks
    exists. Subclasses that define the same hooks must call these."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._handlers: list[bool] = []  # per enclosing except clause: does it catch missing names?
        self._guarded: list[tuple[str, str]] = []
        self._guarded_bodies: dict[int, tuple[str, str]] = {}

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> bool | None:
        self._handlers.append(catches_missing_names(node))
        return True

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler, updated_node=None):
        self._handlers.pop()
        return updated_node  # a transformer's leave_ hook returns the node; a visitor's is ignored

    def visit_If(self, node: cst.If) -> bool | None:
        guarded = guarded_attribute(node.test)
        if guarded is not None:
            self._guarded_bodies[id(node.body)] = guarded
        return True

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool | None:
        guarded = self._guarded_bodies.get(id(node))
        if guarded is not None:
            self._guarded.append(guarded)
        return True

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node=None):
        if id(original_node) in self._guarded_bodies:
            self._guarded.pop()
        return updated_node

    def in_version_fallback(self, node: cst.CSTNode) -> bool:
        if any(self._handlers):
            return True
        if isinstance(node, cst.Attribute) and self._guarded:
            return (get_full_name_for_node(node.value), node.attr.value) in self._guarded
        return False
