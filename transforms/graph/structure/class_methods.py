"""Graph-building methods of a class holding the graph, written out in its `__init__`, e.g.

    def __init__(self, vocab_size):
        self.inputs = tf.placeholder(tf.int32, [None, 20])
        self.instantiate_weights(vocab_size)
        self.logits = self.inference()
        self.loss_val = self.loss()

    def inference(self):
        embedded = tf.nn.embedding_lookup(self.embedding, self.inputs)
        ...
        return logits

becomes one `__init__` building the whole graph (`self.logits = logits` after the statements of
`inference`), which transforms/graph/structure/classes.py then reads as usual. A method is written out
where it is called when that is its only use (from `__init__`, or from a method written out there),
the call is a statement of its own (`self.m(...)`, or `target = self.m(...)`) and the method returns
only by its last statement. Its parameters become assignments before its statements (defaults must
be constants); its locals keep their names unless `__init__` uses the name, another written-out
method reads it from the module, or a method it is written out in binds it: then `<method>_<name>`.

A method used otherwise, but only in calls made while the graph is built (`self.dense(x, w)` in
expressions, or twice), setting no attribute, becomes a function nested at the start of `__init__`
(`dense(x, w)`), reading `self` from it.

An early `if <test>: return` at the top level of `__init__` becomes `if not <test>:` around the
statements after it.

Refused: a method reading a name that `__init__` binds (it would read `__init__`'s value, not the
module's), and a nested function's name that `__init__` uses already."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.syntax import NodeOrigins, Refusal, binding_names, is_docstring, load_names, only_small_statement, walk
from transforms.graph.structure.class_helpers import check_helper_names, nested_function, nested_helpers
from transforms.graph.structure.class_method_calls import (Method, branch_statements, called_method, find_calls,
                                                           graph_methods, is_method_of)
from transforms.graph.structure.class_method_writer import MethodWriter, is_early_return, non_empty


@dataclass
class _Inlining:
    """What writing the methods out changes: per original node, how its rebuilt version is made."""

    replacements: dict = field(default_factory=dict)
    origins: NodeOrigins = field(default_factory=NodeOrigins)


def methods_inlined(resolver, class_node: cst.ClassDef) -> _Inlining | None:
    """The replacements writing out the graph methods of `class_node` in its `__init__`; None when
    `__init__` calls none that can be."""
    methods = graph_methods(class_node)
    init = methods.pop("__init__", None)
    if init is None:
        return None
    for caller in [init, *methods.values()]:
        find_calls(caller, methods)
    inlinable = _written_out_from(init, methods)
    helpers = nested_helpers(init, methods, inlinable)
    if not inlinable and not helpers and not any(is_early_return(s) for s in init.node.body.body[:-1]):
        return None  # (a last statement `if x: return` has nothing after it to put under an `if`)
    inlining = _Inlining()
    _plan_locals(resolver, init, inlinable, inlining)
    check_helper_names(resolver, init, inlinable, helpers)
    for caller in [init, *inlinable.values(), *helpers.values()]:  # `self.dense(x)` -> `dense(x)`
        for node in walk(caller.node.body):
            if isinstance(node, cst.Call) and is_method_of(node.func, caller.self_name, helpers):
                inlining.replacements[id(node.func)] = lambda _, name=node.func.attr.value: cst.Name(name)
    inlining.replacements[id(class_node)] = lambda updated: _rebuilt_class(class_node, updated, init, inlinable,
                                                                           helpers, inlining.origins)
    return inlining


def _written_out_from(init: Method, methods: dict[str, Method]) -> dict[str, Method]:
    """The methods written out in `__init__`: reached from it by call statements, each through its only
    use, with one that can be written out (transitively)."""
    chosen: dict[str, Method] = {}
    callers = [init]
    while callers:
        caller = callers.pop()
        for statement in branch_statements(caller.node.body):
            name = called_method(statement, caller.self_name)
            method = methods.get(name)
            if method is not None and name not in chosen and _writable_out(method, caller.self_name):
                method.caller = caller if caller is not init else None
                chosen[name] = method
                callers.append(method)
    return chosen


def _writable_out(method: Method, self_name: str) -> bool:
    """Used once, by a call statement; returns only at its end; no nested scopes that could hold its names."""
    node = method.node
    if method.references != 1 or len(method.calls) != 1 or method.self_name != self_name \
            or node.name.value.startswith("__"):
        return False
    params = node.params
    if params.star_arg != cst.MaybeSentinel.DEFAULT or params.star_kwarg or params.kwonly_params \
            or params.posonly_params:
        return False
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    returns = [n for n in walk(node.body) if isinstance(n, cst.Return)]
    if returns and (len(returns) > 1 or only_small_statement(body[-1]) is not returns[0]):
        return False
    if any(isinstance(n, (cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.FunctionDef, cst.ClassDef, cst.Lambda))
           for n in walk(node.body)):
        return False
    return returns == [] or returns[0].value is not None


def _plan_locals(resolver, init: Method, methods: dict[str, Method], inlining: _Inlining) -> None:
    """Written out in `__init__`, a method's locals share its scope: each local that `__init__` uses,
    that another written-out method reads from the module, or that a method it is written out in binds
    (whose later statements may read it) takes the name `<method>_<local>`. A method reading a name
    that `__init__` binds is refused (it would read `__init__`'s value)."""
    init_scope = resolver.scope(init.node.body.body[0])
    init_bound = {assignment.name for assignment in init_scope.assignments}
    init_used = init_bound | {n.value for n in load_names(init.node.body)}
    taken = {n.value for n in load_names(resolver.module, parameters=True)}
    owns, frees = {}, {}
    for name, method in methods.items():
        scope = resolver.scope(method.node.body.body[0])
        owns[name] = {assignment.name for assignment in scope.assignments} - {method.self_name}
        frees[name] = {n.value for n in load_names(method.node.body)} - owns[name] - {method.self_name}
        captured = sorted(frees[name] & init_bound)
        if captured:
            raise Refusal(method.node, f"'{name}' reads {', '.join(captured)}, which __init__ binds: written out "
                                       "in __init__ it would read __init__'s value")
    for name, method in methods.items():  # callers before the methods written out in them
        avoided = init_used | set().union(*(free for other, free in frees.items() if other != name))
        caller = method.caller
        while caller is not None:
            caller_name = caller.node.name.value
            avoided |= {caller.renamed.get(local, local) for local in owns[caller_name]}
            caller = caller.caller
        scope = resolver.scope(method.node.body.body[0])
        for local in sorted(owns[name] & avoided):
            fresh = f"{name}_{local}"
            if fresh in taken:
                raise Refusal(method.node, f"'{name}' binds '{local}', which __init__ uses, and '{fresh}' is taken")
            taken.add(fresh)
            method.renamed[local] = fresh
            for node in binding_names(scope, local):
                inlining.replacements[id(node)] = lambda _, fresh=fresh: cst.Name(fresh)


def _rebuilt_class(original: cst.ClassDef, updated: cst.ClassDef, init: Method, inlinable: dict[str, Method],
                   helpers: dict[str, Method], origins: NodeOrigins) -> cst.ClassDef:
    """The class with the methods' statements in `__init__`, its helpers nested at its start, and
    those methods gone."""
    rebuilt = {id(m): u for m, u in zip(original.body.body, updated.body.body)}
    writer = MethodWriter(rebuilt, inlinable, origins)
    nested = [nested_function(rebuilt[id(helper.node)], helper.node, origins) for helper in helpers.values()]
    members = []
    for member, new in zip(original.body.body, updated.body.body):
        if member is init.node:
            body = writer.block(member.body, new.body, init.self_name, top_level=True)
            docstring = body[:1] if body and is_docstring(member.body.body[0]) else []
            rest = body[len(docstring):]
            if nested and rest:
                rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *rest[0].leading_lines])
            body = non_empty([*docstring, *nested, *rest])
            new = new.with_changes(body=new.body.with_changes(body=body))
        elif isinstance(member, cst.FunctionDef) and (member.name.value in inlinable or member.name.value in helpers):
            continue
        if new is not member:
            origins.add(new, member)
        members.append(new)
    return updated.with_changes(body=updated.body.with_changes(body=members))
