"""Drop `from tensorflow... import name` aliases whose every use a transform has rewritten.

`from tensorflow import placeholder` fails to import under TF2 once `placeholder` is gone; after its
uses become `tf.compat.v1.placeholder` the import is both dead and broken, so it goes. An alias with
any use left (or none at all: it may be a re-export) stays.
"""
from __future__ import annotations

import ast
from functools import lru_cache

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ScopeProvider

from transforms.api._tf_spelling import TF_MODULE
from transforms.common.syntax import module_code, python_ast

ImportKey = tuple[str, str, str | None]  # (module, name, asname)


def fully_rewritten_imports(transform, module: cst.Module, rewritten: set[int]) -> set[ImportKey]:
    """Module-level tensorflow from-imports all of whose uses are among the `rewritten` nodes."""
    keys: set[ImportKey] = set()
    if not rewritten or not _imports_from_tensorflow(module):
        return keys  # most files `import tensorflow as tf`: no scope analysis for them
    scope = transform.get_metadata(ScopeProvider, module, None)
    if scope is None:
        return keys
    for assignment in scope.assignments:
        node = getattr(assignment, "node", None)
        if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None:
            continue
        module_name = get_full_name_for_node(node.module) or ""
        uses = [access.node for access in assignment.references]
        if not (module_name == TF_MODULE or module_name.startswith(TF_MODULE + ".")):
            continue
        if uses and all(id(use) in rewritten for use in uses):
            keys |= {key for key in _alias_keys(node, module_name) if _bound_name(key) == assignment.name}
    return keys


def _imports_from_tensorflow(module: cst.Module) -> bool:
    return _code_imports_from_tensorflow(module_code(module))


@lru_cache(maxsize=4)  # asked by each reference transform that rewrote the same code
def _code_imports_from_tensorflow(code: str) -> bool:
    """Whether the code has a `from tensorflow... import` anywhere (CPython's parse, shared)."""
    tree = python_ast(code)
    return tree is None or any(
        isinstance(node, ast.ImportFrom) and not node.level and node.module is not None
        and (node.module == TF_MODULE or node.module.startswith(TF_MODULE + ".")) for node in ast.walk(tree))


def remove_imports(module: cst.Module, keys: set[ImportKey]) -> cst.Module:
    if not keys:
        return module
    body = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            statement = _without(statement, keys)
            if statement is None:
                continue
        body.append(statement)
    return module.with_changes(body=body)


def _without(statement: cst.SimpleStatementLine, keys: set[ImportKey]) -> cst.SimpleStatementLine | None:
    smalls = []
    for small in statement.body:
        if isinstance(small, cst.ImportFrom) and small.module and not isinstance(small.names, cst.ImportStar):
            module_name = get_full_name_for_node(small.module) or ""
            names = [a for a in small.names if import_key(a, module_name) not in keys]
            if not names:
                continue
            if len(names) != len(small.names):
                names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                small = small.with_changes(names=names, rpar=small.rpar if len(names) > 1 else None,
                                           lpar=small.lpar if len(names) > 1 else None)
        smalls.append(small)
    if not smalls:
        return None
    smalls[-1] = smalls[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=smalls)


def _alias_keys(node: cst.ImportFrom, module_name: str) -> list[ImportKey]:
    if isinstance(node.names, cst.ImportStar):
        return []
    return [import_key(alias, module_name) for alias in node.names]


def import_key(alias: cst.ImportAlias, module_name: str) -> ImportKey:
    """How an imported name is recognised: (module, name, asname)."""
    asname = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None
    return (module_name, get_full_name_for_node(alias.name) or "", asname)


def _bound_name(key: ImportKey) -> str:
    return key[2] or key[1].split(".")[0]
