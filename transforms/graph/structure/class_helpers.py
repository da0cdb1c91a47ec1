"""Methods only called while a class builds its graph (`self.dense(x, w)` in expressions, or
several times), setting no attribute: they become functions nested at the start of `__init__`
(`dense(x, w)`), reading `self` from it (see transforms/graph/structure/class_methods.py)."""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import NodeOrigins, Refusal, is_constant, load_names, walk
from transforms.graph.structure.class_method_calls import Method


def nested_helpers(init: Method, methods: dict[str, Method], inlinable: dict[str, Method]) -> dict[str, Method]:
    """Methods only called while the graph is built (by `__init__`, the methods written out there or
    other such methods), setting no attribute: they become functions nested in `__init__`, reading
    `self` from it (`self.get_context(x)` -> `get_context(x)`)."""
    helpers = {name: m for name, m in methods.items()
               if name not in inlinable and m.references and m.references == m.called and _is_helper(m, init)}
    building = {"__init__", *inlinable}
    while True:
        kept = {name: m for name, m in helpers.items() if m.referrers <= building | set(helpers)}
        if len(kept) == len(helpers):
            return kept
        helpers = kept


def _is_helper(method: Method, init: Method) -> bool:
    node = method.node
    if method.self_name != init.self_name or node.name.value.startswith("__"):
        return False
    if any(param.default is not None and not is_constant(param.default) for param in node.params.params):
        return False  # nested, a default would be made at each __init__, not once with the class
    if any(isinstance(n, (cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.ClassDef)) for n in walk(node.body)):
        return False
    return not any(isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign))
                   and isinstance(n.target, cst.Attribute) and isinstance(n.target.value, cst.Name)
                   and n.target.value.value == method.self_name for n in walk(node.body))


def check_helper_names(resolver, init: Method, inlinable: dict[str, Method], helpers: dict[str, Method]) -> None:
    """Nested in `__init__`, a helper's name is one of its locals, and the names it reads from the
    module are looked up through `__init__`'s: the name must be free there, and what it reads must not
    be one of `__init__`'s locals (methods written out included) or another helper."""
    if not helpers:
        return
    bound, used = _init_names(resolver, init, inlinable)
    for name, helper in helpers.items():
        if name in used:
            raise Refusal(helper.node, f"'{name}' becomes a function nested in __init__, which already uses the name")
        scope = resolver.scope(helper.node.body.body[0])
        free = {n.value for n in load_names(helper.node.body)} - {a.name for a in scope.assignments}
        captured = sorted(free & (bound | set(helpers)))
        if captured:
            raise Refusal(helper.node, f"'{name}' reads {', '.join(captured)}, which __init__ binds: nested in "
                                       "__init__ it would read __init__'s value")


def _init_names(resolver, init: Method, inlinable: dict[str, Method]) -> tuple[set[str], set[str]]:
    """The names `__init__` binds and those it uses, once the methods are written out in it."""
    bound, used = set(), set()
    for method in [init, *inlinable.values()]:
        scope = resolver.scope(method.node.body.body[0])
        bound |= {method.renamed.get(a.name, a.name) for a in scope.assignments}
        used |= {n.value for n in load_names(method.node.body)}
    return bound, used | bound


def nested_function(updated: cst.FunctionDef, original: cst.FunctionDef, origins: NodeOrigins) -> cst.FunctionDef:
    """A helper method as a function nested in `__init__`: no `self` parameter (it reads `__init__`'s)."""
    params = updated.params.params[1:]
    if params:
        params = [*params[:-1], params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    nested = updated.with_changes(params=updated.params.with_changes(params=params))
    origins.add(nested, original)
    return nested
