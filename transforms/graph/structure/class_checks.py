"""The checks that a class holding the graph can be rewritten (see transforms/graph/structure/classes.py): what its
`__init__` assigns, what its methods do with `self`, and how its instances are made."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.graph_symbols import Category, calls_category
from transforms.graph.structure.class_feeds import check_feed_method, is_feed_method
from transforms.common.syntax import Refusal, is_target, load_names, walk, walk_outside_functions


@dataclass
class GraphClass:
    node: cst.ClassDef
    init: cst.FunctionDef
    methods: dict[str, cst.FunctionDef]
    attributes: list[str] = field(default_factory=list)   # in order of first assignment in __init__
    line: cst.SimpleStatementLine | None = None            # `model = Model(...)` (the first of several)
    instance: cst.Name | None = None
    instances: list[tuple[cst.SimpleStatementLine, cst.Name]] = field(default_factory=list)  # in source order
    feeds: set[str] = field(default_factory=set)           # methods that only build a feed dict
    #: `self.<attribute>` in __init__: (Attribute node, whether it is assigned), as self_attributes gives them.
    init_uses: list[tuple[cst.Attribute, bool]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.node.name.value


def creates_placeholders(resolver, node: cst.CSTNode) -> bool:
    return calls_category(resolver.tf_name, node, Category.PLACEHOLDER)


def read_class(resolver, node: cst.ClassDef) -> GraphClass:
    name = node.name.value
    if node.decorators or node.keywords or any(
            not (isinstance(base.value, cst.Name) and base.value.value == "object") for base in node.bases):
        raise Refusal(node, f"class '{name}' holds the graph but has bases, decorators or a metaclass")
    methods = {}
    for index, member in enumerate(node.body.body):
        if index == 0 and _is_docstring(member):
            continue
        if not isinstance(member, cst.FunctionDef):
            raise Refusal(member, f"class '{name}' holds the graph and has class attributes")
        method = member.name.value
        if member.decorators:
            raise Refusal(member, f"method '{method}' of '{name}' is decorated (property, staticmethod, ...)")
        if method in methods:
            raise Refusal(member, f"class '{name}' defines '{method}' twice")
        if method.startswith("__") and method != "__init__":
            raise Refusal(member, f"class '{name}' holds the graph and defines '{method}'")
        methods[method] = member
    init = methods.pop("__init__", None)
    if init is None:
        raise Refusal(node, f"class '{name}' creates placeholders outside __init__")
    graph_class = GraphClass(node, init, methods)
    _read_init(resolver, graph_class)
    for method in methods.values():
        _check_method(resolver, graph_class, method)
    _read_instance(resolver, graph_class)
    return graph_class


def _self_parameter(function: cst.FunctionDef, class_name: str) -> str:
    params = function.params
    if not params.params or isinstance(params.star_arg, cst.Param) or params.star_kwarg or params.kwonly_params \
            or params.posonly_params:
        raise Refusal(function, f"'{class_name}.{function.name.value}' has */**, keyword-only parameters or no self")
    return params.params[0].name.value


def self_attributes(resolver, function: cst.FunctionDef, self_name: str, class_name: str):
    """(Attribute node, whether it is assigned) for every use of `self`, refusing other uses."""
    uses = []
    for node in load_names(function.body):
        if node.value != self_name:
            continue
        attribute = resolver.parent(node)
        if not (isinstance(attribute, cst.Attribute) and attribute.value is node):
            raise Refusal(node, f"'{class_name}.{function.name.value}' uses '{self_name}' other than as "
                                f"`{self_name}.<attribute>`")
        uses.append((attribute, is_target(resolver, attribute)))
    for assignment in resolver.scope(function.body.body[0]).assignments[self_name]:
        if not isinstance(assignment.node, cst.Param):
            raise Refusal(assignment.node, f"'{class_name}.{function.name.value}' rebinds '{self_name}'")
    return uses


def _read_init(resolver, graph_class: GraphClass) -> None:
    init, name = graph_class.init, graph_class.name
    self_name = _self_parameter(init, name)
    for node in walk_outside_functions(init.body):
        if isinstance(node, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal, cst.ClassDef)):
            raise Refusal(node, f"'{name}.__init__' returns, yields, declares names or defines classes")
    uses = graph_class.init_uses = self_attributes(resolver, init, self_name, name)
    for attribute, assigned in uses:
        if assigned and attribute.attr.value not in graph_class.attributes:
            graph_class.attributes.append(attribute.attr.value)
    for attribute, assigned in uses:
        if not assigned and attribute.attr.value in graph_class.methods:
            raise Refusal(attribute, f"'{name}.__init__' uses the method '{attribute.attr.value}', which is "
                                     "neither written out in it (one call, a statement of its own: `[x =] "
                                     "self.method(...)`) nor a function nested in it (only called while the graph "
                                     "is built, setting no attribute)")
        if not assigned and attribute.attr.value not in graph_class.attributes:
            raise Refusal(attribute, f"'{name}.__init__' reads '{attribute.attr.value}', which it does not assign")
    clash = sorted(set(graph_class.attributes) & set(graph_class.methods))
    if clash:
        raise Refusal(graph_class.node, f"class '{name}' has attributes and methods named {', '.join(clash)}")


def _check_method(resolver, graph_class: GraphClass, method: cst.FunctionDef) -> None:
    label = f"'{graph_class.name}.{method.name.value}'"
    self_name = _self_parameter(method, graph_class.name)
    for attribute, assigned in self_attributes(resolver, method, self_name, graph_class.name):
        if assigned:
            raise Refusal(attribute, f"{label} assigns '{attribute.attr.value}' (only __init__ may set attributes)")
        if attribute.attr.value in graph_class.methods:
            raise Refusal(attribute, f"{label} uses the method '{attribute.attr.value}' (methods that call each "
                                     "other are not converted)")
        if attribute.attr.value not in graph_class.attributes:
            raise Refusal(attribute, f"{label} reads '{attribute.attr.value}', which __init__ does not assign "
                                     "(methods may only read the graph's attributes)")
    params = {p.name.value for p in method.params.params[1:]}
    if any(isinstance(n, cst.Attribute) and n.attr.value == "run" and isinstance(n.value, cst.Name)
           and n.value.value in params for n in walk(method.body)):
        return
    if not is_feed_method(method):
        raise Refusal(method, f"{label} neither runs the session it is given nor only builds a feed dict; "
                              "such methods are not converted")
    check_feed_method(method, label, graph_class.attributes)
    graph_class.feeds.add(method.name.value)


def _read_instance(resolver, graph_class: GraphClass) -> None:
    name = graph_class.name
    accesses = [access for assignment in resolver.scope(graph_class.node).assignments[name]
                for access in assignment.references]
    if not accesses:
        raise Refusal(graph_class.node, f"class '{name}' holds the graph but is never instantiated")
    for access in accesses:
        graph_class.instances.append(_instantiation(resolver, graph_class, access.node, len(accesses)))
    graph_class.line, graph_class.instance = graph_class.instances[0]


def _instantiation(resolver, graph_class: GraphClass, node: cst.Name, count: int):
    """(`model = Model(...)` line, `model`) for one use of the class name, refusing any other use."""
    name = graph_class.name
    call = resolver.parent(node)
    assign = resolver.parent(call) if isinstance(call, cst.Call) else None
    line = resolver.parent(assign) if isinstance(assign, cst.Assign) else None
    if isinstance(line, cst.SimpleStatementLine) and call.func is node and len(assign.targets) == 1 \
            and isinstance(assign.targets[0].target, cst.Name):
        return line, assign.targets[0].target
    if count > 1:
        raise Refusal(node, f"class '{name}' is used several times: each instance builds the graph again and "
                            f"must be made by its own line `name = {name}(...)`")
    raise Refusal(node, f"class '{name}' must be instantiated as `model = {name}(...)`")


def alias_of(member: cst.BaseStatement, self_name: str) -> str | None:
    """`attr` when the statement is `self.attr = attr`."""
    small = member.body[0] if isinstance(member, cst.SimpleStatementLine) and len(member.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    target, value = small.targets[0].target, small.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == self_name \
            and isinstance(value, cst.Name) and value.value == target.attr.value:
        return value.value
    return None


def aliases_local(graph_class: GraphClass, attr: str, scope) -> bool:
    """`self.x` is __init__'s local `x`: one binding of `x`, stored by `self.x = x` at top level only.
    (Otherwise the attribute takes another name when __init__ is inlined.)"""
    self_name = graph_class.init.params.params[0].name.value
    top_aliases = {id(m.body[0].targets[0].target) for m in graph_class.init.body.body if alias_of(m, self_name) == attr}
    assigned = [a for a, stored in graph_class.init_uses if stored and a.attr.value == attr]
    return len(scope.assignments[attr]) == 1 and all(id(a) in top_aliases for a in assigned)


def converted_functions(graph_class: GraphClass) -> dict[str, cst.FunctionDef]:
    """The methods that become module-level functions (feed methods are inlined where called)."""
    return {name: method for name, method in graph_class.methods.items() if name not in graph_class.feeds}


def _is_docstring(node: cst.BaseStatement) -> bool:
    return isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Expr) \
        and isinstance(node.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
