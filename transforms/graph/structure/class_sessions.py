"""A class holding the graph that keeps the session it is given, e.g.

    class Model:
        def __init__(self, sess, name):
            self.sess = sess
            ...
        def predict(self, x_test):
            return self.sess.run(self.logits, feed_dict={self.X: x_test})

    sess = tf.Session()
    m1 = Model(sess, "m1")
    ... m1.predict(images) ...

is first rewritten so that its methods are given the session instead: `__init__` loses the parameter
and the line keeping it, each method running it takes it as a parameter (`def predict(self, sess,
x_test)`, `sess.run(...)`), and each call passes the session its instance was made with
(`Model("m1")`, `m1.predict(sess, images)`). That is the shape transforms/graph/structure/classes.py
converts. Only a session passed by a name bound to nothing else (`sess = tf.Session()`, `with
tf.Session() as sess:`), that `__init__` does nothing else with, is rewritten; a kept session used other
than as `self.sess.run(...)` leaves the class as it was, for the class checks to refuse.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.syntax import NodeOrigins, load_names, walk
from transforms.graph.bridge.region import is_session_call

@dataclass
class _SessionPassed:
    """What passing the session to the methods changes: per original node, how its rebuilt version is made."""

    replacements: dict = field(default_factory=dict)
    origins: NodeOrigins = field(default_factory=NodeOrigins)


@dataclass
class _KeptSession:
    init: cst.FunctionDef
    line: cst.SimpleStatementLine  # `self.sess = sess`
    attribute: str                 # `sess` of `self.sess`
    parameter: str                 # __init__'s parameter holding the session
    position: int                  # its index among __init__'s parameters, self excluded


def session_passed(resolver, class_node: cst.ClassDef) -> _SessionPassed | None:
    """The replacements that give the methods of `class_node` the session its `__init__` keeps; None
    when it keeps none, or when the rewrite would not be exact."""
    for kept in _kept_values(resolver, class_node):
        passed = _passed(resolver, class_node, kept)
        if passed is not None:
            return passed
    return None


def _passed(resolver, class_node: cst.ClassDef, kept: _KeptSession) -> _SessionPassed | None:
    methods = {m.name.value: m for m in class_node.body.body if isinstance(m, cst.FunctionDef) and m is not kept.init}
    uses_by_method = {name: _session_uses(method, kept.attribute) for name, method in methods.items()}
    if any(uses is None for uses in uses_by_method.values()):
        return None
    runners = {name: uses for name, uses in uses_by_method.items() if uses}
    if not runners:
        return None
    instances = _instances(resolver, class_node, kept)
    if instances is None:
        return None
    passed = _SessionPassed()
    passed.replacements[id(kept.line)] = lambda _: cst.RemovalSentinel.REMOVE
    passed.replacements[id(kept.init.params.params[kept.position + 1])] = lambda _: cst.RemovalSentinel.REMOVE
    for name, uses in runners.items():
        method = methods[name]
        if kept.parameter in {n.value for n in load_names(method, parameters=True)}:
            return None  # the method has a name of its own that the parameter would shadow
        passed.replacements[id(method.params)] = lambda updated: updated.with_changes(params=[
            updated.params[0], cst.Param(cst.Name(kept.parameter)), *updated.params[1:]])
        for use in uses:
            passed.replacements[id(use)] = lambda _: cst.Name(kept.parameter)
    for session, argument, calls in instances:
        passed.replacements[id(argument)] = lambda _: cst.RemovalSentinel.REMOVE
        for call in calls:
            if call.func.attr.value in runners:
                passed.replacements[id(call)] = lambda updated, session=session: updated.with_changes(
                    args=[cst.Arg(cst.Name(session)), *updated.args])
    return passed


def _kept_values(resolver, class_node: cst.ClassDef):
    """Each `self.<attribute> = <parameter>` at the top of `__init__` whose parameter (without a
    default) and attribute `__init__` reads nowhere else: where a session may be kept."""
    init = next((m for m in class_node.body.body if isinstance(m, cst.FunctionDef) and m.name.value == "__init__"),
                None)
    if init is None or len(init.params.params) < 2 or isinstance(init.params.star_arg, cst.Param) \
            or init.params.kwonly_params:
        return
    self_name = init.params.params[0].name.value
    parameters = [p.name.value for p in init.params.params[1:]]
    for line in init.body.body:
        small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
            continue
        target, value = small.targets[0].target, small.value
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                and target.value.value == self_name and isinstance(value, cst.Name) and value.value in parameters:
            reads = [n for n in load_names(init.body) if n.value == value.value]
            others = [n for n in walk(init.body) if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name)
                      and n.value.value == self_name and n.attr.value == target.attr.value and n is not target]
            if len(reads) == 1 and not others and resolver.parent(target.value) is target:
                kept = _KeptSession(init, line, target.attr.value, value.value, parameters.index(value.value))
                if init.params.params[kept.position + 1].default is None:
                    yield kept


def _session_uses(method: cst.FunctionDef, attribute: str) -> list[cst.Attribute] | None:
    """The `self.<attribute>` nodes of `method`, each the receiver of a `.run(...)` call; None when
    one is used otherwise, an empty list when there are none."""
    self_name = method.params.params[0].name.value if method.params.params else None
    uses, receivers = [], set()
    for node in walk(method.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "run":
            receivers.add(id(node.func.value))
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == self_name \
                and node.attr.value == attribute:
            uses.append(node)
    if any(id(use) not in receivers for use in uses):
        return None
    return uses


def _instances(resolver, class_node: cst.ClassDef, kept: _KeptSession):
    """(session name, the argument passing the session, the instance's method calls)
    per `name = Class(...)`; None when an instantiation passes no module-level session by name or an
    instance is used other than through its attributes."""
    found = []
    for assignment in resolver.scope(class_node).assignments[class_node.name.value]:
        for access in assignment.references:
            call = resolver.parent(access.node)
            assign = resolver.parent(call) if isinstance(call, cst.Call) and call.func is access.node else None
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
                    and isinstance(assign.targets[0].target, cst.Name)):
                return None
            argument = _argument(call, kept)
            if argument is None or not isinstance(argument.value, cst.Name) \
                    or not _is_session(resolver, argument.value):
                return None
            calls = _method_calls(resolver, assign.targets[0].target)
            if calls is None:
                return None
            found.append((argument.value.value, argument, calls))
    return found or None


def _argument(call: cst.Call, kept: _KeptSession) -> cst.Arg | None:
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword is None and index == kept.position) or (arg.keyword and arg.keyword.value == kept.parameter):
            return arg
    return None


def _method_calls(resolver, instance: cst.Name) -> list[cst.Call] | None:
    calls = []
    for assignment in resolver.scope(instance).assignments[instance.value]:
        for access in assignment.references:
            attribute = resolver.parent(access.node)
            if not isinstance(attribute, cst.Attribute):
                return None
            call = resolver.parent(attribute)
            if isinstance(call, cst.Call) and call.func is attribute:
                calls.append(call)
    return calls


def _is_session(resolver, name: cst.Name) -> bool:
    """Whether every binding of `name` is a session: `name = tf.Session(...)` or
    `with tf.Session(...) as name:`."""
    assignments = list(resolver.scope(name).assignments[name.value])
    if not assignments:
        return False
    for assignment in assignments:
        node = assignment.node
        parent = resolver.parent(node)
        value = None
        if isinstance(parent, cst.AssignTarget):
            assign = resolver.parent(parent)
            value = assign.value if isinstance(assign, cst.Assign) else None
        elif isinstance(parent, cst.AsName):
            item = resolver.parent(parent)
            value = item.item if isinstance(item, cst.WithItem) else None
        if not is_session_call(resolver.transform, value):
            return False
    return True

