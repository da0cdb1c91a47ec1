"""Where a program reads flag values before `app.run` has parsed the command line.

TF1's `tf.app.flags.FLAGS` parsed `sys.argv` on the first attribute read; absl's `FLAGS` raises
UnparsedFlagAccessError until `app.run` (or an explicit `FLAGS(argv)`) parses it. Code that runs
when the module is executed or imported (module-level statements, class bodies, decorators and
default values) therefore needs an explicit parse before its first read; function bodies run later,
under `app.run`, and do not.
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst
from transforms.common.syntax import scan

IsRead = Callable[[cst.CSTNode], bool]
_BLOCK_STATEMENTS = (cst.If, cst.For, cst.While, cst.With, cst.Try)


def first_import_time_read(body, is_read: IsRead) -> cst.BaseStatement | None:
    """The first statement of `body` (searched into nested blocks and class bodies, in source
    order) that reads a flag value when it runs at import time, or None."""
    for statement in body:
        found = _read_in(statement, is_read)
        if found is not None:
            return found
    return None


def _read_in(statement: cst.BaseStatement, is_read: IsRead) -> cst.BaseStatement | None:
    if isinstance(statement, cst.FunctionDef):
        evaluated_now = [*statement.decorators, statement.params]  # defaults are evaluated at `def`
        return statement if any(_reads(part, is_read) for part in evaluated_now) else None
    if isinstance(statement, cst.ClassDef):
        if any(_reads(part, is_read) for part in [*statement.decorators, *statement.bases, *statement.keywords]):
            return statement
        return first_import_time_read(statement.body.body, is_read)
    if isinstance(statement, _BLOCK_STATEMENTS):
        if any(_reads(part, is_read) for part in _headers(statement)):
            return statement
        for block in _blocks(statement):
            found = first_import_time_read(block, is_read)
            if found is not None:
                return found
        return None
    return statement if _reads(statement, is_read) else None


def _headers(statement) -> list[cst.CSTNode]:
    if isinstance(statement, (cst.If, cst.While)):
        return [statement.test]
    if isinstance(statement, cst.For):
        return [statement.iter]
    if isinstance(statement, cst.With):
        return list(statement.items)
    return []


def _blocks(statement) -> list:
    blocks = [statement.body.body]
    if isinstance(statement, cst.Try):
        blocks += [handler.body.body for handler in statement.handlers]
        blocks += [part.body.body for part in (statement.orelse, statement.finalbody) if part is not None]
    elif isinstance(statement, cst.If) and statement.orelse is not None:
        orelse = statement.orelse
        blocks += [[orelse]] if isinstance(orelse, cst.If) else [orelse.body.body]
    elif getattr(statement, "orelse", None) is not None:
        blocks.append(statement.orelse.body.body)
    return blocks


def _reads(node: cst.CSTNode, is_read: IsRead) -> bool:
    """Whether evaluating `node` now reads a flag (lambda bodies and nested defs run later)."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Lambda(self, _) -> bool:
            return False

        def visit_FunctionDef(self, _) -> bool:
            return False

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            nonlocal found
            found = found or is_read(attribute)
            return not found

    scan(node, Finder())
    return found
