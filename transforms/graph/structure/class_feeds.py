"""Feed methods of a class holding the graph (transforms/graph/structure/classes.py): methods that only build a feed dict
from their arguments, e.g.

    def feed(self, pairs):
        left, right, same = pairs
        return {self.left: left, self.right: right, self.same: same}

    ... sess.run(model.loss, model.feed(pairs)) ...

Each call is inlined where it stands: the method's statements go right before the statement holding
the call (its locals renamed `<method>_<local>`, its parameters replaced by the arguments) and the
call becomes the dict literal, which TFM201 reads as any feed dict:

    feed_left, feed_right, feed_same = pairs
    ... sess.run(model.loss, {model.left: feed_left, ...}) ...

Only where moving the statements earlier cannot change anything: the method's statements are plain
assignments and its dict's values use no calls, every argument is a name or a literal, and the call
sits in a statement of its own, not in a lambda, comprehension or nested function."""
from __future__ import annotations

import libcst as cst

from transforms.graph.sessions.session_helpers import bound_argument, plain_parameters
from transforms.common.syntax import (
    Refusal,
    code,
    is_literal,
    load_names,
    replace_nodes,
    walk,
)

_DEFERRED = (cst.Lambda, cst.FunctionDef, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def is_feed_method(method: cst.FunctionDef) -> bool:
    """Whether the method's last statement returns a dict literal (the shape of a feed method)."""
    last = method.body.body[-1] if isinstance(method.body, cst.IndentedBlock) else None
    small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
    return isinstance(small, cst.Return) and isinstance(small.value, cst.Dict)


def check_feed_method(method: cst.FunctionDef, label: str, attributes: list[str]) -> None:
    self_name = method.params.params[0].name.value
    *statements, last = _body(method)
    for statement in statements:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if not isinstance(small, cst.Assign):
            raise Refusal(statement, f"{label} builds a feed dict but does more than assign names first")
        for target in small.targets:
            if not _names_only(target.target):
                raise Refusal(target, f"{label} assigns to something other than names")
        _check_pure(small.value, label, self_name)
    for element in last.body[0].value.elements:
        key = element.key if isinstance(element, cst.DictElement) else None
        if not (isinstance(key, cst.Attribute) and isinstance(key.value, cst.Name) and key.value.value == self_name
                and key.attr.value in attributes):
            raise Refusal(element, f"{label} returns a dict whose keys are not the graph's attributes")
        _check_pure(element.value, label, self_name)


def _names_only(target: cst.BaseExpression) -> bool:
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _names_only(e.value) for e in target.elements)
    return isinstance(target, cst.Name)


def _body(method: cst.FunctionDef) -> list[cst.BaseStatement]:
    body = list(method.body.body)
    first = body[0]
    if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) \
            and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        body = body[1:]
    return body


def _check_pure(value: cst.BaseExpression, label: str, self_name: str) -> None:
    for node in walk(value):
        if isinstance(node, (cst.Call, cst.Lambda, cst.NamedExpr, cst.Await, cst.Yield)) or \
                (isinstance(node, cst.Name) and node.value == self_name):
            raise Refusal(node, f"{label} computes more than a feed dict from its arguments")


def feed_replacements(resolver, method: cst.FunctionDef, calls: list[cst.Call], instance: str,
                      taken: set[str]) -> dict:
    """Replacements inlining every call of the feed method (refused where they cannot be); `taken`:
    names the class's attributes may become."""
    name = method.name.value
    taken = taken | {n.value for n in load_names(resolver.module, parameters=True)}
    params = plain_parameters(method)
    own = {n.value for statement in _body(method)[:-1] for n in load_names(statement)} - set(params)
    locals_ = {local: f"{name}_{local}" for local in sorted(own)}
    clash = sorted(new for new in locals_.values() if new in taken)
    if clash:
        raise Refusal(method, f"the feed method '{name}' is inlined, but the program already uses {', '.join(clash)}")
    hoisted: dict[int, tuple[cst.SimpleStatementLine, list[cst.BaseStatement]]] = {}
    replacements = {}
    for call in calls:
        line = _statement_of(resolver, call, name)
        renames = {**locals_, **_arguments(call, params, name)}
        *statements, last = _body(method)
        hoisted.setdefault(id(line), (line, []))[1].extend(_renamed(s, renames) for s in statements)
        replacements[id(call)] = lambda _, last=last, renames=renames: _feed_dict(last.body[0].value, renames,
                                                                                 method, instance)
    for line, statements in hoisted.values():
        if statements:
            replacements[id(line)] = lambda updated, statements=statements: cst.FlattenSentinel(
                [statements[0].with_changes(leading_lines=updated.leading_lines), *statements[1:],
                 updated.with_changes(leading_lines=[])])
    return replacements


def _statement_of(resolver, call: cst.Call, name: str) -> cst.SimpleStatementLine:
    current = resolver.parent(call)
    while current is not None and not isinstance(current, cst.SimpleStatementLine):
        if isinstance(current, (*_DEFERRED, cst.BaseCompoundStatement)):
            raise Refusal(call, f"the feed method '{name}' is called where its statements cannot go before the call")
        current = resolver.parent(current)
    if current is None or len(current.body) != 1:
        raise Refusal(call, f"the feed method '{name}' is called in a line with several statements")
    return current


def _arguments(call: cst.Call, params: list[str], name: str) -> dict[str, str]:
    if len(call.args) != len(params) - 1:
        raise Refusal(call, f"the feed method '{name}' is called without exactly its arguments")
    renames = {}
    for param in params[1:]:
        arg = bound_argument(call.with_changes(args=[cst.Arg(cst.Name("_")), *call.args]), params, param)
        if arg is None or not (isinstance(arg.value, cst.Name) or is_literal(arg.value)):
            raise Refusal(call, f"the feed method '{name}' is passed something other than names or literals")
        renames[param] = code(arg.value)
    return renames


def _renamed(node: cst.CSTNode, renames: dict[str, str]):
    replacements = {id(n): (lambda _, text=renames[n.value]: cst.parse_expression(text))
                    for n in load_names(node) if n.value in renames}
    return replace_nodes(node, replacements)


def _feed_dict(returned: cst.Dict, renames: dict[str, str], method: cst.FunctionDef, instance: str) -> cst.Dict:
    elements = []
    for element in returned.elements:
        key = cst.parse_expression(f'{instance}["{element.key.attr.value}"]')
        elements.append(element.with_changes(key=key, value=_renamed(element.value, renames)))
    return returned.with_changes(elements=elements)
