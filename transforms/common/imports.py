"""Adding imports to a module after a transform, without libcst.codemod (see transforms/base.py)."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.qualnames import dotted_name


@dataclass(frozen=True)
class ImportRequest:
    module: str
    name: str | None = None
    asname: str | None = None

    def statement(self) -> cst.SimpleStatementLine:
        if self.name:
            text = f"from {self.module} import {self.name}"
        else:
            text = f"import {self.module}"
        if self.asname:
            text += f" as {self.asname}"
        return cst.parse_statement(text + "\n")


def add_imports(module: cst.Module, requests: list[ImportRequest]) -> cst.Module:
    """Insert the requested imports that the module lacks after its last top-level import (or after the
    docstring and `__future__` imports when it has none)."""
    present = _existing_imports(module)
    missing = [r for r in dict.fromkeys(requests) if _key(r) not in present]
    if not missing:
        return module
    body = list(module.body)
    position = position_after_imports(body)
    body[position:position] = [request.statement() for request in missing]
    return module.with_changes(body=body)


def _key(request: ImportRequest) -> tuple[str, str | None, str | None]:
    return (request.module, request.name, request.asname)


def _existing_imports(module: cst.Module) -> set[tuple[str, str | None, str | None]]:
    found = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    found.add((dotted_name(alias.name), None, _asname(alias)))
            elif isinstance(small, cst.ImportFrom) and small.module and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    found.add((dotted_name(small.module), dotted_name(alias.name), _asname(alias)))
    return found


def position_after_imports(body: list[cst.BaseStatement]) -> int:
    """Where code goes after a module's leading imports (and docstring)."""
    position = 0
    for index, statement in enumerate(body):
        if _is_import(statement) or (index == 0 and _is_docstring(statement)):
            position = index + 1
        elif position:
            break
    return position


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))



def _asname(alias: cst.ImportAlias) -> str | None:
    if alias.asname and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return None
