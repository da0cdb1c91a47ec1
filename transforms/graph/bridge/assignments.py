"""Variable assignments that run where they are built: `sess.run(tf.assign(model.lr, 0.5 * rate))`.

TF1 builds such an op and runs it at once (often building a new op on every pass of a loop). On
the wrapped graph the variable is a TF2 variable, so the assignment is the variable's own method,
run eagerly where the line stood: `model.lr.assign(0.5 * rate)`. The value must be computed from
Python values (and the assigned variable itself): a graph tensor cannot be read eagerly.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.syntax import Refusal, bind_arguments, calls_under, children, code

ASSIGNMENTS = {"tf.assign": "assign", "tf.assign_add": "assign_add", "tf.assign_sub": "assign_sub"}


@dataclass
class Assignment:
    line: cst.SimpleStatementLine | cst.SimpleStatementSuite  # replaced by `variable.<method>(value)`
    method: str  # the variable's method doing the same: assign, assign_add, assign_sub
    variable: cst.BaseExpression
    value: cst.BaseExpression

    def eager_line(self) -> cst.SimpleStatementLine | cst.SimpleStatementSuite:
        """`variable.assign(value)`, the line's comments kept."""
        call = cst.Call(cst.Attribute(self.variable, cst.Name(self.method)), [cst.Arg(self.value)])
        return self.line.with_changes(body=[cst.Expr(call)])

    def finding(self) -> str:
        return f"tf.{self.method}() built and run at once -> `{code(self.variable)}.{self.method}(...)`, run " \
               "eagerly on the wrapped graph's variable"


def assignment_of(transform, call: cst.BaseExpression) -> tuple[str, cst.BaseExpression, cst.BaseExpression] | None:
    """(method, variable, value) of `tf.assign(ref, value)` given nothing else, the variable computed by
    no call; None for any other expression."""
    if not isinstance(call, cst.Call) or (method := ASSIGNMENTS.get(transform.tf_name(call.func))) is None:
        return None
    try:
        bound = bind_arguments(call, ["ref", "value"], "tf.assign")
    except Refusal:
        return None
    if len(bound) != 2 or next(calls_under(bound["ref"]), None) is not None:
        return None
    return method, bound["ref"], bound["value"]


def run_assignment(transform, line: cst.BaseStatement, fetches: cst.BaseExpression,
                   graph_names: set[str]) -> Assignment | None:
    """The assignment a run line `sess.run(tf.assign(...))` makes, when it can run eagerly: the line (or
    the one-line body of an `if`) holds the run alone, and the value reads no graph value but the
    variable assigned."""
    found = assignment_of(transform, fetches)
    lines = (cst.SimpleStatementLine, cst.SimpleStatementSuite)
    if found is None or not isinstance(line, lines) or len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
        return None
    method, variable, value = found
    if _reads_graph_values(value, code(variable), graph_names):
        return None
    return Assignment(line, method, variable, value)


def _reads_graph_values(node: cst.CSTNode, variable: str, graph_names: set[str]) -> bool:
    """Whether `node` reads a name the graph code binds, but in the assigned variable's expression."""
    if isinstance(node, (cst.Name, cst.Attribute)) and code(node) == variable:
        return False
    if isinstance(node, cst.Name):
        return node.value in graph_names
    if isinstance(node, (cst.Attribute, cst.Arg)):  # an attribute's or a keyword's name is no variable
        return _reads_graph_values(node.value, variable, graph_names)
    return any(_reads_graph_values(child, variable, graph_names) for child in children(node))
