"""`if n_outputs == 20: y = tf.nn.softmax(...)  else: y = tf.nn.softmax(_y)`: graph code chosen by
plain Python while the graph is built.

TF1 evaluated the test once, when it built the graph; a step function holding the same `if`
evaluates it once too, when it is traced (its input signature is fixed), from the same Python values:
the tests may read only plain Python names, and those the block never rebinds after the `if` (the
check every Python value captured by graph code gets, analysis/checks.py), and call nothing (each
step function traces the `if` again: `random.random() < 0.5` could choose another branch each time). So the whole statement is
one graph statement binding every name any branch binds, kept as written in each step function
that needs one of them; a name bound in some branches only keeps its earlier value in the others,
as in TF1. Branches may hold nothing but assignments of graph values to names."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import walk


def branch_assignments(statement: cst.If) -> list[cst.Assign] | None:
    """The assignments of every branch (`elif` and `else` included); None when a branch holds
    anything else (a call, a nested block, an augmented assignment, ...)."""
    assigns: list[cst.Assign] = []
    for body in branch_bodies(statement):
        for line in body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                return None
            for small in line.body:
                if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                    return None
                assigns.append(small)
    return assigns


def branch_tests(statement: cst.If) -> list[cst.BaseExpression]:
    return [branch.test for branch in _if_chain(statement)]


def calls_anything(test: cst.BaseExpression) -> bool:
    return any(isinstance(node, cst.Call) for node in walk(test))


def branch_bodies(statement: cst.If) -> list[cst.BaseSuite]:
    """The bodies of the `if`, its `elif`s and its `else`, in order."""
    chain = _if_chain(statement)
    bodies = [branch.body for branch in chain]
    if isinstance(chain[-1].orelse, cst.Else):
        bodies.append(chain[-1].orelse.body)
    return bodies


def _if_chain(statement: cst.If) -> list[cst.If]:
    """The `if` and its `elif`s."""
    chain = [statement]
    while isinstance(chain[-1].orelse, cst.If):
        chain.append(chain[-1].orelse)
    return chain
