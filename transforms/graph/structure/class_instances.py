"""A class holding the graph (see transforms/graph/structure/classes.py) instantiated several times,
the main and target networks of deep Q-learning:

    mainQN = Qnetwork(h_size)
    targetQN = Qnetwork(h_size)
    ... sess.run(mainQN.Qout, feed_dict={mainQN.scalarInput: s}) ...

Each instantiation becomes a copy of `__init__`'s body where it stands: its parameters bound to the
call's arguments, and every name it binds and every attribute it sets prefixed with the instance
(`mainQN_h_size`, `mainQN_Qout`, as one instance's attribute is named where its name is taken);
`mainQN.Qout` becomes `mainQN_Qout`. TF1 built the graph again at each instantiation, so the copies
create their variables in the same order and under the same variable and name scopes: the list
`tf.trainable_variables()` becomes, and its slices, are TF1's.

Refused: instantiations other than `name = Class(...)` lines in the straight-line code of the module
or of one module-level function (`with` blocks included; not in a loop, a condition or a list), a
name bound to several instances or rebound, an instance used other than as `instance.attribute`,
attributes assigned outside `__init__`, methods besides `__init__`, parameter defaults that are not
literals, names the copies would take that the program already uses, and, where the instances are
made in a function, `__init__` reading names that function binds. TF1 made the names of the copies'
variables unique (`Variable`, `Variable_1`; `weights`, `weights_1`); where a program selects
variables by such a name, transforms/graph/layers/variable_lists.py refuses."""
from __future__ import annotations

import libcst as cst

from transforms.graph.structure.class_checks import GraphClass, alias_of, aliases_local
from transforms.graph.structure.inline import _TrackingReplacer
from transforms.graph.sessions.session_helpers import bound_argument, owner_of, plain_parameters
from transforms.common.syntax import NodeOrigins, Refusal, code, expr, is_literal, is_target, load_names, statement, walk


def instance_copies(resolver, graph_class: GraphClass) -> tuple[dict, NodeOrigins]:
    """Replacements (by id of original nodes) writing out one copy of `__init__` per instance, and
    the origins of the copied nodes (each copied node -> the `__init__` node it copies)."""
    _check_instances(resolver, graph_class)
    names = {instance.value: _prefixed_names(resolver, graph_class, instance.value)
             for _, instance in graph_class.instances}
    _check_names(resolver, graph_class, names)
    origins = NodeOrigins()
    replacements = {id(graph_class.node): lambda _: cst.RemovalSentinel.REMOVE}
    for line, instance in graph_class.instances:
        body = _copy(resolver, graph_class, line, names[instance.value], origins)
        replacements[id(line)] = lambda _, body=body: cst.FlattenSentinel(body)
        replacements.update(_reference_replacements(resolver, graph_class, instance, names[instance.value]))
    return replacements, origins


def _check_instances(resolver, graph_class: GraphClass) -> None:
    name = graph_class.name
    if graph_class.methods:
        raise Refusal(graph_class.node, f"class '{name}' is instantiated several times and has methods besides "
                                        "__init__ (only attributes of several instances are converted)")
    owner = owner_of(resolver, graph_class.line)
    for line, instance in graph_class.instances:
        if owner_of(resolver, line) is not owner or len(line.body) != 1 \
                or not _straight_line(resolver, resolver.parent(line)):
            raise Refusal(line, f"the instances of '{name}' must be made by lines `name = {name}(...)` in the "
                                "same code, outside loops and conditions (each instance builds the graph again)")
        if len(resolver.scope(instance).assignments[instance.value]) != 1:
            raise Refusal(line, f"'{instance.value}', an instance of '{name}', is bound more than once")
    order = {id(node): index for index, node in enumerate(walk(owner))}
    graph_class.instances.sort(key=lambda pair: order[id(pair[0])])
    graph_class.line, graph_class.instance = graph_class.instances[0]


def _straight_line(resolver, block: cst.CSTNode) -> bool:
    """Whether the block is the module, a module-level function's body, or `with` blocks in them."""
    while not isinstance(block, cst.Module):
        holder = resolver.parent(block)
        if isinstance(holder, cst.FunctionDef):
            return isinstance(resolver.parent(holder), cst.Module)
        if not isinstance(holder, cst.With):
            return False
        block = resolver.parent(holder)
    return True


def _prefixed_names(resolver, graph_class: GraphClass, instance: str) -> dict[str, str]:
    """What `__init__`'s locals (parameters included) and the attributes become in one copy; keys
    of attributes are `self.<attribute>`."""
    scope = resolver.scope(graph_class.init.body.body[0])
    self_name = graph_class.init.params.params[0].name.value
    local = {name: f"{instance}_{name}" for name in _bound_names(scope) if name != self_name}
    attributes = {f"self.{attr}": f"{instance}_{attr}" for attr in graph_class.attributes}
    for attr in graph_class.attributes:
        if attr in local and not aliases_local(graph_class, attr, scope):
            raise Refusal(graph_class.init, f"'{graph_class.name}.__init__' has a local and an attribute named "
                                            f"'{attr}'; with several instances both would be '{instance}_{attr}'")
    return {**local, **attributes}


def _bound_names(scope) -> set[str]:
    return {assignment.name for assignment in scope.assignments}


def _check_names(resolver, graph_class: GraphClass, names: dict[str, dict[str, str]]) -> None:
    """The copies' names must be new to the program and distinct from each other."""
    others = [s for s in resolver.module.body if s is not graph_class.node]
    taken = {n.value for node in others for n in load_names(node, parameters=True)}
    taken |= {n.value for n in load_names(graph_class.init.body)}  # what __init__ reads from outside
    taken -= {instance.value for _, instance in graph_class.instances}
    made = [new for renames in names.values() for new in set(renames.values())]
    clash = sorted({new for new in made if new in taken or made.count(new) > 1})
    if clash:
        raise Refusal(graph_class.line, f"the instances of '{graph_class.name}' are written out, but the "
                                        f"program already uses {', '.join(clash)}")
    owner = owner_of(resolver, graph_class.line)
    if isinstance(owner, cst.FunctionDef):
        own = _bound_names(resolver.scope(graph_class.init.body.body[0]))
        free = {n.value for n in load_names(graph_class.init.body)} - own
        shadowed = sorted(free & _bound_names(resolver.scope(owner.body.body[0])))
        if shadowed:
            raise Refusal(graph_class.line, f"'{graph_class.name}.__init__' reads {', '.join(shadowed)}, which "
                                            f"'{owner.name.value}' binds to something else")


def _copy(resolver, graph_class: GraphClass, line: cst.SimpleStatementLine, renames: dict[str, str],
          origins: NodeOrigins) -> list[cst.BaseStatement]:
    """`__init__`'s body for one instance: its parameters bound to the call's arguments, then its
    statements with the instance's names (an alias line `self.x = x` goes). A parameter given a
    string literal that `__init__` never rebinds is that literal (scope names must be literals)."""
    self_name = graph_class.init.params.params[0].name.value
    body = [s for s in graph_class.init.body.body if not _is_docstring(s)]
    kept = [s for s in body if alias_of(s, self_name) is None
            or renames[alias_of(s, self_name)] != renames[f"self.{alias_of(s, self_name)}"]]
    arguments = _arguments(graph_class, line.body[0].value)
    scope = resolver.scope(graph_class.init.body.body[0])
    strings = {param: code(value) for param, value in arguments
               if isinstance(value, cst.SimpleString) and len(scope.assignments[param]) == 1}
    renames = {**renames, **strings}
    statements = [statement(f"{renames[param]} = {code(value)}") for param, value in arguments if param not in strings]
    statements += [_renamed(graph_class, s, renames, origins) for s in kept]
    statements[0] = statements[0].with_changes(leading_lines=[*line.leading_lines, *statements[0].leading_lines])
    return statements


def _arguments(graph_class: GraphClass, call: cst.Call) -> list[tuple[str, cst.BaseExpression]]:
    """(parameter, value) in the order the call evaluated its arguments, then the defaults."""
    init, label = graph_class.init, f"'{graph_class.name}'"
    params = plain_parameters(init)[1:]
    passed = [(p, arg) for p in params if (arg := bound_argument(_with_self(call), ["self", *params], p))]
    if len(passed) != len(call.args):
        raise Refusal(call, f"{label} is instantiated with arguments that match no parameter of __init__")
    passed.sort(key=lambda pair: [id(a) for a in call.args].index(id(pair[1])))
    values = [(p, arg.value) for p, arg in passed]
    defaults = {p.name.value: p.default for p in init.params.params if p.default is not None}
    for param in params:
        if param in dict(passed):
            continue
        if param not in defaults or not is_literal(defaults[param]):
            raise Refusal(call, f"{label} is instantiated without '{param}', whose default is not a literal")
        values.append((param, defaults[param]))
    return values


def _with_self(call: cst.Call) -> cst.Call:
    return call.with_changes(args=[cst.Arg(cst.Name("self")), *call.args])


def _renamed(graph_class: GraphClass, original: cst.BaseStatement, renames: dict[str, str],
             origins: NodeOrigins) -> cst.BaseStatement:
    """A fresh copy of an `__init__` statement with the instance's names, its nodes traced back to it."""
    self_name = graph_class.init.params.params[0].name.value
    copy = original.deep_clone()
    traced = {id(new): old for old, new in zip(walk(original), walk(copy))}
    replacements = {}
    for name in load_names(copy, parameters=True):
        if name.value in renames:
            replacements[id(name)] = lambda _, new=renames[name.value]: expr(new)
    for attribute in (n for n in walk(copy) if isinstance(n, cst.Attribute)):
        if isinstance(attribute.value, cst.Name) and attribute.value.value == self_name:
            replacements[id(attribute)] = lambda _, new=renames[f"self.{attribute.attr.value}"]: cst.Name(new)
    replacer = _TrackingReplacer(replacements)
    result = copy.visit(replacer)
    # `copy`'s nodes are alive here, so `traced` still names them; `copy` is garbage once rebuilt.
    for new, old in replacer.origins.pairs():
        origins.add(new, traced.get(id(old), old))
    return result


def _reference_replacements(resolver, graph_class: GraphClass, instance: cst.Name, renames: dict[str, str]) -> dict:
    """`instance.attribute` -> the copy's name for it; any other use of the instance is refused."""
    name = graph_class.name
    replacements, refusals = {}, []
    assignment = next(iter(resolver.scope(instance).assignments[instance.value]))
    for access in assignment.references:
        node = access.node
        attribute = resolver.parent(node)
        member = attribute.attr.value if isinstance(attribute, cst.Attribute) and attribute.value is node else None
        if member in graph_class.attributes and not is_target(resolver, attribute):
            replacements[id(attribute)] = lambda _, new=renames[f"self.{member}"]: cst.Name(new)
        elif member is not None and is_target(resolver, attribute):
            refusals.append(Refusal(attribute, f"'{node.value}.{member}' is assigned outside '{name}.__init__'"))
        else:
            refusals.append(Refusal(node, f"the '{name}' instance '{node.value}' is used other than as "
                                          f"`{node.value}.<attribute>` (it no longer exists in TF2)"))
    if refusals:
        raise resolver.first_refusal(refusals)
    return replacements


def _is_docstring(node: cst.BaseStatement) -> bool:
    return isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Expr) \
        and isinstance(node.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
