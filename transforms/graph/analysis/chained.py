"""`x = inputs = tf.placeholder(...)`: one graph value bound to several names at once.

The graph analysis reads a statement as binding one value to one name, so a chained assignment of
plain names is read as the assignment to its first name followed by aliases of it
(`x = tf.placeholder(...)`, `inputs = x`): Python binds the names left to right to the same object,
so each later name holds exactly what the first holds. The aliases of a graph value are graph
statements of their own (an identity in the step functions that read them); a later name may then
be rebound as any tensor (`inputs = tf.transpose(inputs, ...)`), as in TF1."""
from __future__ import annotations

import libcst as cst


def chained_parts(statement: cst.BaseStatement) -> list[cst.SimpleStatementLine] | None:
    """`a = b = value` as `a = value`, `b = a` (the original nodes, so metadata still answers for
    them); None for any other statement, or when a target is not a plain name."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) < 2:
        return None
    names = [target.target for target in assign.targets]
    if not all(isinstance(name, cst.Name) for name in names):
        return None
    first = statement.with_changes(body=[assign.with_changes(targets=[assign.targets[0]])])
    return [first] + [_alias(name, names[0]) for name in names[1:]]


def _alias(name: cst.Name, first: cst.Name) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(name)], first)])
