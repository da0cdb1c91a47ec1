"""Syntax facts the step-loop fusion (TFM301) needs: names read and bound, statements that leave a
loop early, and the output structure of a step function. Pure libcst, no metadata."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from transforms.common.syntax import scan

# Statements after which the Python loop would not run every step to the end (or would change
# scoping): their presence anywhere in a loop body rules the fusion out.
LEAVING = (cst.Break, cst.Continue, cst.Return, cst.Raise, cst.Global, cst.Nonlocal, cst.Del,
           cst.FunctionDef, cst.ClassDef, cst.With, cst.Try, cst.Assert, cst.Import, cst.ImportFrom)


def names_read(node: cst.CSTNode, skip=None) -> list[str]:
    """Every bare name in `node`, in source order (attribute names after a dot excluded); with
    `skip`, those of the called function of each call for which `skip(call)` holds left out."""
    found: list[str] = []

    class Collector(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> bool:
            if skip is None or not skip(call):
                return True
            for arg in call.args:
                arg.visit(self)
            return False

        def visit_Name(self, name: cst.Name) -> None:
            found.append(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

    scan(node, Collector())
    return found


def names_loaded(node: cst.CSTNode) -> list[str]:
    """The bare names `node` reads, in source order: `names_read` without the names that assignment,
    loop, comprehension and walrus targets bind (`a[i] = ...` reads `a` and `i`)."""
    bound = {id(name) for target in _binding_targets(node) for name in _target_name_nodes(target)}
    return [name.value for name in _bare_names(node) if id(name) not in bound]


def names_bound(nodes) -> set[str]:
    """Names that statements in `nodes` bind (assignments, `+=`, loop targets, walrus)."""
    return {name.value for node in nodes for target in _binding_targets(node, augmented=True)
            for name in _target_name_nodes(target)}


def _binding_targets(node: cst.CSTNode, augmented: bool = False) -> list[cst.BaseExpression]:
    """The targets of the bindings in `node`; with `augmented`, those of `+=` and the like too (which
    also read their target)."""
    found: list[cst.BaseExpression] = []

    class Collector(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            found.append(target.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if augmented:
                found.append(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            found.append(node.target)

        def visit_For(self, node: cst.For) -> None:
            found.append(node.target)

        def visit_CompFor(self, node: cst.CompFor) -> None:
            found.append(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            found.append(node.target)

    scan(node, Collector())
    return found


def _target_name_nodes(target: cst.BaseExpression) -> list[cst.Name]:
    """The names a target binds: itself, or those of a tuple / list / starred target (attribute and
    subscript targets bind none)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_name_nodes(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_name_nodes(target.value)
    return []


def _bare_names(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)
            return False

    scan(node, Collector())
    return found


def calls_in(node: cst.CSTNode, nested_loops: bool = True) -> list[cst.Call]:
    """Calls in `node`; without `nested_loops`, those inside loops nested in it are left out."""
    found: list[cst.Call] = []

    class Collector(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            found.append(call)

        def visit_For(self, loop: cst.For) -> bool:
            return nested_loops

        def visit_While(self, loop: cst.While) -> bool:
            return nested_loops

    scan(node, Collector())
    return found


def leaving_statement(nodes) -> cst.CSTNode | None:
    """The first statement in `nodes` that leaves the loop early or needs a scope of its own."""
    found: list[cst.CSTNode] = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (*LEAVING, cst.Yield, cst.Await, cst.Lambda)):
                found.append(node)
                return False
            return not found

    for node in nodes:
        scan(node, Finder())
    return found[0] if found else None


@dataclass(frozen=True)
class Outputs:
    """What a step function returns: "none", "single", "list", "tuple" or "dict"; the keys of its
    non-None leaves and of its None leaves (list/tuple positions, dict keys as source text)."""

    kind: str
    keys: tuple = ()
    length: int = 0
    none_keys: tuple = ()
    names: tuple = ()  # per key, the plain name the function returns there ("" for an expression)


def merged_steps(function: cst.FunctionDef) -> list[str] | None:
    """The step functions a function TFM311 wrote runs in turn (its body returns a tuple of
    `S.python_function(...)` calls), or None for any other function."""
    body = function.body.body
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)
            and isinstance(last.body[0].value, cst.Tuple)):
        return None
    steps = []
    for element in last.body[0].value.elements:
        func = element.value.func if isinstance(element.value, cst.Call) else None
        if not (isinstance(func, cst.Attribute) and func.attr.value == "python_function"
                and isinstance(func.value, cst.Name)):
            return None
        steps.append(func.value.value)
    return steps


def step_outputs(function: cst.FunctionDef) -> Outputs | None:
    """The output structure of `function`, from its single final `return`; None when unclear."""
    body = function.body.body
    returns = [n for n in body if isinstance(n, cst.SimpleStatementLine) and isinstance(n.body[0], cst.Return)]
    last = body[-1] if body else None
    if not returns:
        return Outputs("none")
    if len(returns) != 1 or returns[0] is not last or _returns_inside(body[:-1]):
        return None
    value = _displayed(returns[0].body[0].value, body[:-1])
    if value is None or is_none(value):
        return Outputs("none")
    if isinstance(value, (cst.List, cst.Tuple)):
        items = [e.value for e in value.elements]
        if any(isinstance(e, cst.StarredElement) for e in value.elements):
            return None
        keys = tuple(i for i, item in enumerate(items) if not is_none(item))
        nones = tuple(i for i, item in enumerate(items) if is_none(item))
        names = tuple(_plain_name(items[i]) for i in keys)
        return Outputs("list" if isinstance(value, cst.List) else "tuple", keys, len(items), nones, names)
    if isinstance(value, cst.Dict):
        keys, nones = [], []
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            (nones if is_none(element.value) else keys).append(element.key.value)
        return Outputs("dict", tuple(keys), len(value.elements), tuple(nones))
    return Outputs("single", names=(_plain_name(value),))


def _displayed(value: cst.BaseExpression | None, before: list[cst.BaseStatement]) -> cst.BaseExpression | None:
    """A returned name bound once, by a statement of the body's own, to a dict, list or tuple display
    (TFM201's `summary = {"loss": loss}; return summary`): that display, with `**name` spreads of
    such dict displays written out (a merge of summaries); else the value itself."""
    display = _bound_display(value, before) if isinstance(value, cst.Name) else None
    if display is None:
        return value
    if not isinstance(display, cst.Dict):
        return display
    elements = []
    for element in display.elements:
        spread = _bound_display(element.value, before) if isinstance(element, cst.StarredDictElement) else None
        elements.extend(spread.elements if isinstance(spread, cst.Dict) else [element])
    return display.with_changes(elements=elements)


def _bound_display(name: cst.BaseExpression, before: list[cst.BaseStatement]) -> cst.BaseExpression | None:
    """The dict, list or tuple display `name` is bound to by the one statement of `before` binding it."""
    if not isinstance(name, cst.Name):
        return None
    bindings = [s for s in before if name.value in names_bound([s])]
    small = bindings[0].body[0] if len(bindings) == 1 and isinstance(bindings[0], cst.SimpleStatementLine) \
        and len(bindings[0].body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
            and isinstance(small.value, (cst.Dict, cst.List, cst.Tuple)):
        return small.value
    return None


def _plain_name(node: cst.BaseExpression) -> str:
    return node.value if isinstance(node, cst.Name) else ""


def is_none(node: cst.BaseExpression) -> bool:
    """The literal `None`."""
    return isinstance(node, cst.Name) and node.value == "None"


def callee_name(call: cst.Call) -> str | None:
    """The name a call calls when it is a plain name (`step(...)`), else None."""
    return call.func.value if isinstance(call.func, cst.Name) else None


def _returns_inside(statements) -> bool:
    found: list[cst.Return] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            found.append(node)

    for statement in statements:
        scan(statement, Finder())
    return bool(found)


def parameter_names(function: cst.FunctionDef) -> set[str]:
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return {param.name.value for param in every}
