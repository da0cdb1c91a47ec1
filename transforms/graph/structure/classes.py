"""Classes that hold the graph, e.g.

    class Model:
        def __init__(self, num_features):
            self.x = tf.placeholder(tf.float32, [None, num_features])
            ...
            self.loss = tf.reduce_mean(...)

        def evaluate(self, sess, xs):
            return sess.run(self.loss, {self.x: xs})

    model = Model(5)
    ... sess.run(model.loss, {model.x: data}) ... model.evaluate(sess, data)

are first rewritten into a graph builder (transforms/graph/structure/builders.py) and session helpers
(transforms/graph/sessions/session_helpers.py): `__init__` becomes a function named like the class that returns its
attributes in a dict (`self.loss` is its local `loss`), `model.loss` becomes `model["loss"]`, and each
method becomes a module-level function taking the dict in place of `self`
(`model.evaluate(sess, data)` -> `evaluate(model, sess, data)`). That machinery then inlines the
builder at the instantiation and drops the dict and session parameters. An attribute takes its own
name, or `<instance>_<attribute>` where the program uses that name already. Methods that only build
a feed dict are inlined where they are called (transforms/graph/structure/class_feeds.py).

A class instantiated several times (`mainQN = Qnetwork(...)`, `targetQN = Qnetwork(...)`) becomes one
copy of `__init__` per instance instead (transforms/graph/structure/class_instances.py).

Methods that build part of the graph for `__init__` (`self.logits = self.inference()`) are first
written out in it, and an early `if not is_training: return` becomes an `if` around the rest
(transforms/graph/structure/class_methods.py).

Refused (the class stays as it is): bases other than `object`, decorators, class attributes,
properties and other special methods, uses of the class other than instantiations, attributes
assigned outside `__init__`, `self` used other than as `self.<attribute>`, methods that call each
other or neither run the session given to them nor only build a feed dict (once the graph methods
are written out), and the instance used other than as `model.<attribute>` or `model.<method>(...)`.
An attribute whose name `__init__` also uses for a different local takes the name
`<instance>_<attribute>`."""
from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from transforms.graph.structure.class_checks import (
    GraphClass,
    alias_of,
    aliases_local,
    converted_functions,
    creates_placeholders,
    read_class,
    self_attributes,
)
from transforms.graph.structure.class_feeds import feed_replacements
from transforms.graph.structure.class_methods import methods_inlined
from transforms.graph.structure.class_sessions import session_passed
from transforms.graph.structure.class_instances import instance_copies
from transforms.graph.structure.inline import _TrackingReplacer, converted, inlined_program
from transforms.graph._pipeline import GraphProgram
from transforms.graph.analysis.resolver import GraphResolver
from transforms.common.lazy_metadata import LazyMetadataWrapper
from transforms.common.syntax import NodeOrigins, Refusal, is_target, load_names, statement


def class_program(transform, module: cst.Module) -> _ClassProgram | None:
    """The program with its graph-holding class rewritten into a builder; None when it has none."""
    resolver = GraphResolver(transform, module)
    found = [s for s in module.body if isinstance(s, cst.ClassDef) and creates_placeholders(resolver, s)]
    if not found:
        return None
    if len(found) > 1:
        raise Refusal(found[1], "several classes create placeholders")
    passed = session_passed(resolver, found[0])
    if passed is not None:
        return _MethodsWrittenOut(transform, module, passed, found[0])
    inlining = methods_inlined(resolver, found[0])
    if inlining is not None:
        return _MethodsWrittenOut(transform, module, inlining, found[0])
    graph_class = read_class(resolver, found[0])
    if len(graph_class.instances) > 1:
        return _instances_program(transform, module, resolver, graph_class)
    replacements = _init_replacements(resolver, graph_class)
    for method in converted_functions(graph_class).values():
        replacements.update(_method_replacements(resolver, graph_class, method))
    replacements.update(_instance_replacements(resolver, graph_class))
    functions = NodeOrigins()  # new function -> the method it was
    replacements[id(graph_class.node)] = lambda updated: cst.FlattenSentinel(
        _as_functions(graph_class.node, updated, graph_class.feeds, functions))
    replacer = _TrackingReplacer(replacements)
    rewritten = module.visit(replacer)
    return _ClassProgram(transform, rewritten, replacer.origins.merged(functions), graph_class.line)


def _instances_program(transform, module: cst.Module, resolver, graph_class: GraphClass) -> _ClassProgram:
    """The program with one copy of `__init__` per instance (transforms/graph/structure/class_instances.py)."""
    replacements, copied = instance_copies(resolver, graph_class)
    replacer = _TrackingReplacer(replacements)
    rewritten = module.visit(replacer)
    return _ClassProgram(transform, rewritten, replacer.origins.merged(copied), graph_class.line)


class _ClassProgram:
    """Converts the rewritten module; findings and run sites point back into the file as written."""

    def __init__(self, transform, module: cst.Module, origins: NodeOrigins, fallback: cst.CSTNode):
        self.transform, self.module, self.origins, self.fallback = transform, module, origins, fallback

    def original(self, node: cst.CSTNode | None) -> cst.CSTNode | None:
        if node is None:
            return None
        node = self.origins.origin(node, node)
        return node if self.transform.get_metadata(PositionProvider, node, None) is not None else self.fallback

    def convert(self) -> tuple[cst.Module, list[tuple[cst.Call, str]]]:
        return converted(self.transform, self.module, self.original, self._program)

    def _program(self, inner):
        """What converts the rewritten module (`inner`: a transform resolving its metadata)."""
        return inlined_program(inner, self.module) or GraphProgram(inner, self.module)


class _MethodsWrittenOut(_ClassProgram):
    """The program with the class's graph methods written out in `__init__`
    (transforms/graph/structure/class_methods.py), or its kept session passed to its methods
    (transforms/graph/structure/class_sessions.py), then converted as a class program."""

    def __init__(self, transform, module: cst.Module, inlining, class_node: cst.ClassDef) -> None:
        replacer = _TrackingReplacer(inlining.replacements)
        rewritten = module.visit(replacer)
        super().__init__(transform, rewritten, replacer.origins.merged(inlining.origins), class_node)

    def _program(self, inner):
        # Again, as the written-out methods may have uses of their own to write out; each round that
        # rewrites removes methods or early returns, so the rounds end.
        return class_program(inner, self.module)


def _init_replacements(resolver, graph_class: GraphClass) -> dict:
    """`self.attr` -> the local `attr`; `self.attr = attr` (an alias of a local) goes."""
    init, name = graph_class.init, graph_class.name
    self_name = init.params.params[0].name.value
    scope = resolver.scope(init.body.body[0])
    replacements = {}
    local = _local_names(resolver, graph_class, scope)
    for attribute, _ in graph_class.init_uses:
        replacements[id(attribute)] = lambda _, attr=attribute.attr.value: cst.Name(local[attr])
    for member in init.body.body:
        aliased = alias_of(member, self_name)
        if aliased is not None and local[aliased] == aliased:
            replacements[id(member)] = lambda _: cst.RemovalSentinel.REMOVE
    keys = ", ".join(f'"{attr}": {local[attr]}' for attr in graph_class.attributes)
    returned = statement(f"return {{{keys}}}")
    replacements[id(init)] = lambda updated: updated.with_changes(
        name=cst.Name(name), params=updated.params.with_changes(params=updated.params.params[1:]),
        body=updated.body.with_changes(body=[*updated.body.body, returned]))
    return replacements


def _local_names(resolver, graph_class: GraphClass, scope) -> dict[str, str]:
    """The name each attribute takes once __init__ is inlined: its own, or `<instance>_<attribute>`
    when the rest of the program (methods included) already uses that name."""
    others = [s for s in resolver.module.body if s is not graph_class.node] + list(converted_functions(graph_class).values())
    taken = {n.value for node in others for n in load_names(node, parameters=True)}
    taken |= set(scope.assignments)
    local = {}
    for attr in graph_class.attributes:
        prefixed = f"{graph_class.instance.value}_{attr}"
        if (attr in scope.assignments and aliases_local(graph_class, attr, scope)) or (
                attr not in scope.assignments and attr not in taken):
            local[attr] = attr
        elif prefixed not in taken and prefixed not in graph_class.attributes:
            local[attr] = prefixed  # also where __init__ has a different local of the attribute's name
        else:
            raise Refusal(graph_class.line, f"the attribute '{attr}' of '{graph_class.name}' becomes a variable, "
                                            f"but the program already uses '{attr}' and '{prefixed}'")
    return local


def _method_replacements(resolver, graph_class: GraphClass, method: cst.FunctionDef) -> dict:
    self_name = method.params.params[0].name.value
    replacements = {}
    for attribute, _ in self_attributes(resolver, method, self_name, graph_class.name):
        replacements[id(attribute)] = lambda _, node=attribute: _subscript(node)
    return replacements


def _subscript(attribute: cst.Attribute) -> cst.Subscript:
    key = cst.SimpleString(f'"{attribute.attr.value}"')
    return cst.Subscript(value=attribute.value, slice=[cst.SubscriptElement(cst.Index(key))])


def _instance_replacements(resolver, graph_class: GraphClass) -> dict:
    instance = graph_class.instance
    assignments = resolver.scope(instance).assignments[instance.value]
    if len(assignments) != 1:
        raise Refusal(instance, f"'{instance.value}', the '{graph_class.name}' instance, is rebound")
    _check_method_names(resolver, graph_class)
    replacements = {}
    feed_calls: dict[str, list[cst.Call]] = {name: [] for name in graph_class.feeds}
    refusals = []
    for access in next(iter(assignments)).references:
        node = access.node
        attribute = resolver.parent(node)
        member = attribute.attr.value if isinstance(attribute, cst.Attribute) and attribute.value is node else None
        if member in graph_class.attributes and not is_target(resolver, attribute):
            replacements[id(attribute)] = lambda _, attribute=attribute: _subscript(attribute)
            continue
        call = resolver.parent(attribute) if member in graph_class.methods else None
        if isinstance(call, cst.Call) and call.func is attribute and member in graph_class.feeds:
            feed_calls[member].append(call)
            continue
        if isinstance(call, cst.Call) and call.func is attribute:
            replacements[id(call)] = lambda updated, member=member, node=node: updated.with_changes(
                func=cst.Name(member), args=[cst.Arg(cst.Name(node.value)), *updated.args])
            continue
        if member is not None and is_target(resolver, attribute):
            refusals.append(Refusal(attribute, f"'{node.value}.{member}' is assigned outside "
                                               f"'{graph_class.name}.__init__'"))
            continue
        refusals.append(Refusal(node, f"the '{graph_class.name}' instance '{node.value}' is used other than as "
                                      f"`{node.value}.<attribute>` or `{node.value}.<method>(...)` (it no longer "
                                      "exists in TF2)"))
    if refusals:
        raise resolver.first_refusal(refusals)
    for name, calls in feed_calls.items():
        taken = {*graph_class.attributes, *(f"{instance.value}_{a}" for a in graph_class.attributes)}
        replacements.update(feed_replacements(resolver, graph_class.methods[name], calls, instance.value, taken))
    return replacements


def _check_method_names(resolver, graph_class: GraphClass) -> None:
    """Methods become module-level functions: their names must be free there."""
    used = {n.value for statement in resolver.module.body if statement is not graph_class.node
            for n in load_names(statement, parameters=True)}
    used |= {s.name.value for s in resolver.module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    clash = sorted(name for name in graph_class.methods if name not in graph_class.feeds
                   and (name in used or name == graph_class.name))
    if clash:
        raise Refusal(graph_class.node, f"the methods of '{graph_class.name}' become functions, but the module "
                                        f"already uses {', '.join(clash)}")


def _as_functions(original: cst.ClassDef, updated: cst.ClassDef, feeds: set[str], origins: NodeOrigins) -> list:
    """The class's methods as module-level functions (__init__ named as the class)."""
    kept = [isinstance(m, cst.FunctionDef) and m.name.value not in feeds for m in original.body.body]
    methods = [member for member, keep in zip(original.body.body, kept) if keep]
    functions = [member for member, keep in zip(updated.body.body, kept) if keep]
    result = []
    for index, (method, function) in enumerate(zip(methods, functions)):
        comments = [line for line in function.leading_lines if line.comment]
        spacing = list(original.leading_lines) if index == 0 else [cst.EmptyLine(indent=False)] * 2
        result.append(function.with_changes(leading_lines=[*spacing, *comments]))
        origins.add(result[-1], method)
    return result
