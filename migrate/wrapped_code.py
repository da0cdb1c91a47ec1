"""Which top-level functions and classes of a module hold TF1 graph code that only runs wrapped into a
TF2 function graph (`tf.compat.v1.wrap_function`, directly or through a helper such as TFM203's
`wrap_tf1_graph`), for the `wrapped` level (migrate/levels.py).

Graph code: a function passed to a wrap call, and every function or class used only by graph code
(`weight_variable(shape)` called while the graph is built). Wrapper helpers are the functions whose
own body calls `wrap_function`.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.syntax import children, walk

WRAP_FUNCTION = "tensorflow.compat.v1.wrap_function"
Definition = cst.FunctionDef | cst.ClassDef


def graph_code(module: cst.Module, qualified_names) -> tuple[set[Definition], set[Definition]]:
    """(graph code, wrapper helpers) among the function and class definitions of `module` (at any depth;
    definitions are told apart by name); `qualified_names(node)` gives the names a callee may refer to."""
    if not any(_spells_wrap_function(node) for node in walk(module)):
        return set(), set()  # most files: no wrapped graph, and no qualified names to resolve for it
    definitions: dict[str, list[Definition]] = {}
    for node in walk(module):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            definitions.setdefault(node.name.value, []).append(node)
    wrappers = {d for found in definitions.values() for d in found if isinstance(d, cst.FunctionDef) and any(
        isinstance(node, cst.Call) and WRAP_FUNCTION in qualified_names(node.func) for node in walk(d))}
    wrapper_names = {d.name.value for d in wrappers}
    users: dict[str, set[Definition | None]] = {name: set() for name in definitions}
    graph: set[Definition] = set()

    def read(node: cst.CSTNode, owner: Definition | None) -> None:
        if isinstance(node, cst.Call) and node.args and isinstance(node.args[0].value, cst.Name) \
                and _is_wrap_call(node, wrapper_names, qualified_names):
            graph.update(definitions.get(node.args[0].value.value, ()))
        elif isinstance(node, cst.Name) and node.value in users and owner not in definitions[node.value]:
            users[node.value].add(owner)
        inner = node if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else owner
        for child in children(node):
            if not (child is getattr(node, "name", None) and inner is node):
                read(child, inner)

    read(module, None)
    _add_used_only_by_graph_code(graph, definitions, users)
    return graph, wrappers


def _spells_wrap_function(node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.Attribute) and node.attr.value == "wrap_function") or \
        (isinstance(node, cst.Name) and node.value == "wrap_function")


def _is_wrap_call(call: cst.Call, wrapper_names: set[str], qualified_names) -> bool:
    return (isinstance(call.func, cst.Name) and call.func.value in wrapper_names) \
        or WRAP_FUNCTION in qualified_names(call.func)


def _add_used_only_by_graph_code(graph: set[Definition], definitions: dict[str, list[Definition]],
                                 users: dict[str, set[Definition | None]]) -> None:
    grew = bool(graph)
    while grew:
        grew = False
        _add_nested(graph)
        for name, found in definitions.items():
            if not set(found) <= graph and users[name] and all(user in graph for user in users[name]):
                graph.update(found)
                grew = True


def _add_nested(graph: set[Definition]) -> None:
    """Adds the definitions nested in graph code: a graph class's methods are graph code too, and
    so is what only they use."""
    graph.update({node for definition in list(graph) for node in walk(definition)
                  if isinstance(node, (cst.FunctionDef, cst.ClassDef))})
