"""Which names a run of module-level statements binds, read without scope metadata: assignment,
loop, `with ... as`, import, `def` and `class` targets, in nested blocks too but not inside
functions, classes, lambdas or comprehensions (whose names are their own)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import libcst as cst

from transforms.common.syntax import children, only_small_statement, walk

_OWN_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
               cst.GeneratorExp)


def bound_names(statements: Iterable[cst.CSTNode]) -> set[str]:
    names: set[str] = set()
    for statement in statements:
        for target in _targets(statement):
            names.update(_names_in_target(target))
    return names


def mentions(node: cst.CSTNode, name: str) -> bool:
    """Whether a Name node under `node` spells `name` (an attribute's or keyword's too)."""
    return any(isinstance(child, cst.Name) and child.value == name for child in walk(node))


def name_assignments(scope: cst.CSTNode) -> dict[int, tuple[str, cst.SimpleStatementLine]]:
    """The `name = value` lines under `scope`, by the identity of their value: (name, line)."""
    found = {}
    for node in walk(scope):
        small = only_small_statement(node) if isinstance(node, cst.SimpleStatementLine) else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            found[id(small.value)] = (small.targets[0].target.value, node)
    return found


def _targets(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        yield node.name
        return
    if isinstance(node, _OWN_SCOPES):
        return
    if isinstance(node, cst.AssignTarget):
        yield node.target
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For)):
        yield node.target
    elif isinstance(node, cst.NamedExpr):
        yield node.target
    elif isinstance(node, cst.AsName):
        yield node.name
    elif isinstance(node, cst.ImportAlias) and node.asname is None:
        yield cst.Name(_first_part(node.name))
    for child in children(node):
        yield from _targets(child)


def _first_part(name: cst.Attribute | cst.Name) -> str:
    while isinstance(name, cst.Attribute):
        name = name.value
    return name.value


def _names_in_target(target: cst.CSTNode) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names_in_target(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names_in_target(target.value)
