"""First looks at a module by CPython's parse (a few milliseconds, where the fusion transforms' own
facts take tens): whether it may hold what TFM309 or TFM310 rewrites or reports at all. Each test is
a necessary condition of the transform's own, so a module failing it is one the transform leaves as
it is, without a finding; a module CPython cannot parse passes.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from transforms.common.syntax import python_ast
from transforms.speed.fusion.names import LOOP_SUFFIX

LOOPS = (ast.For, ast.AsyncFor)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: The simple statements that can hold a call.
SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Delete, ast.Raise, ast.Assert)


def may_call_epoch_helper(code: str) -> bool:
    """TFM309's: a loop's simple statement calls an undecorated function that has a loop of its own."""
    tree = python_ast(code)
    if tree is None:
        return True
    helpers = {node.name for node in ast.walk(tree) if isinstance(node, FUNCTIONS) and not node.decorator_list
               and any(isinstance(inner, LOOPS) for inner in ast.walk(node))}
    return bool(helpers) and any(name in helpers for name in _names_called_in_loops(tree))


def may_call_multi_step_in_loop(code: str) -> bool:
    """TFM310's: a simple statement of a loop's body calls a function of the module named `*_loop`."""
    tree = python_ast(code)
    if tree is None:
        return True
    multi_step = {node.name for node in ast.walk(tree)
                  if isinstance(node, FUNCTIONS) and node.name.endswith(LOOP_SUFFIX)}
    return bool(multi_step) and any(name in multi_step for name in _names_called_in_loops(tree))


def _names_called_in_loops(tree: ast.Module) -> Iterator[str]:
    """The plain names called by the simple statements of loop bodies (not by a compound statement's
    own body: both transforms look for a call that is a loop's statement of its own)."""
    for loop in ast.walk(tree):
        if not isinstance(loop, LOOPS):
            continue
        for statement in loop.body:
            if isinstance(statement, SIMPLE):
                yield from (node.func.id for node in ast.walk(statement)
                            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name))
