"""Feed functions: a function computing the values of a run's feed dict in plain Python and returning
the dict, as TensorFlow's own tutorial does:

    def fill_feed_dict(data_set, images_pl, labels_pl):
        images_feed, labels_feed = data_set.next_batch(FLAGS.batch_size)
        feed_dict = {images_pl: images_feed, labels_pl: labels_feed}
        return feed_dict
    ...
        feed_dict = fill_feed_dict(data_sets.train, images_placeholder, labels_placeholder)
        _, loss_value = sess.run([train_op, loss], feed_dict=feed_dict)

TFM201 reads a feed dict where it is written, with the placeholders it is keyed by, so each call is
replaced by the function's body: its parameters read the names the call passes (or are bound to the
other arguments first, in the call's order), its locals keep their names unless the calling code
uses them (then `<function>_<name>`), and the returned dict is bound to the call's target
(`feed_dict = {images_placeholder: images_feed, ...}`). A call inside a statement
(`sess.run(loss, feed_dict=feed(False))`) is written out before that statement, its dict bound to a
name of its own, where nothing that statement evaluates before the call has effects. The function
goes once every call is written out.

Read so only: a function defined at module level or in the body of a module-level function, with
plain parameters (defaults constant), that builds no graph, returns once, at its end, a dict literal
keyed by names or attributes (or a name bound once to one), declares no names and defines nothing;
used only by such calls, where the names it reads mean what they mean where it is defined."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import (LocalRenamer, calls_under, fresh_name, is_docstring, load_names, walk,
                                      walk_outside_functions)
from transforms.graph.sessions.session_helpers import bound_argument

# What may have effects when evaluated (attribute and item reads are taken to have none).
_EFFECTS = (cst.Call, cst.NamedExpr, cst.Yield, cst.Await, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
            cst.GeneratorExp)


@dataclass
class FeedCall:
    call: cst.Call
    line: cst.SimpleStatementLine  # the statement holding the call
    target: str | None             # `target = f(...)`; None: the call is part of the statement


@dataclass
class FeedFunction:
    function: cst.FunctionDef
    params: list[str]
    result: str | None             # the local bound to the returned dict (None: `return {...}`)
    calls: list[FeedCall]


def find_feed_functions(resolver) -> list[FeedFunction]:
    """The program's feed functions whose every call can be written out."""
    found = []
    for function in _candidates(resolver.module):
        result = _returned_dict(function)
        if result is None or not _plain_feed_code(resolver, function):
            continue
        calls = _calls(resolver, function)
        if calls and not _shadowed(resolver, function, calls):
            found.append(FeedFunction(function, [p.name.value for p in function.params.params], result[0], calls))
    return found


def feed_function_replacements(resolver, functions: list[FeedFunction], taken: set[str],
                               written_beside: list[cst.FunctionDef]) -> dict:
    """Replacements (by id of original nodes) writing out each call and removing each function
    (`written_beside`: functions whose bodies other rewrites write out, whose names count as used)."""
    also_used = {node.value for function in written_beside for node in load_names(function, parameters=True)}
    replacements = {}
    written: dict[int, set[str]] = {}  # id of a caller -> the names the bodies written out there bind
    for feed in functions:
        replacements[id(feed.function)] = lambda _: cst.RemovalSentinel.REMOVE
        for feed_call in feed.calls:
            earlier = written.setdefault(id(_caller(resolver, feed_call.line)), set())
            renames, more = _written_out(resolver, feed, feed_call, taken, also_used, earlier)
            replacements.update(more)
            earlier |= set(renames.values())
    return replacements


def _candidates(module: cst.Module):
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            yield statement
            if isinstance(statement.body, cst.IndentedBlock):
                yield from (s for s in statement.body.body if isinstance(s, cst.FunctionDef))


def _body(function: cst.FunctionDef) -> list[cst.BaseStatement]:
    statements = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    return statements[1:] if statements and is_docstring(statements[0]) else statements


def returned_feed_dict(function: cst.FunctionDef) -> cst.Dict | None:
    """The dict literal a feed function returns, or None when `function` is not shaped as one."""
    result = _returned_dict(function)
    return result[1] if result is not None else None


def _returned_dict(function: cst.FunctionDef) -> tuple[str | None, cst.Dict] | None:
    """(the local bound to the returned dict, or None for `return {...}`; that dict literal), or None
    when `function` is not shaped as a feed function."""
    params = function.params
    if function.decorators or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg \
            or params.kwonly_params or params.posonly_params or function.asynchronous:
        return None
    body = _body(function)
    last = body[-1].body[0] if body and isinstance(body[-1], cst.SimpleStatementLine) and len(body[-1].body) == 1 \
        else None
    if not isinstance(last, cst.Return) or last.value is None:
        return None
    for node in walk_outside_functions(function.body):
        if isinstance(node, (cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.FunctionDef,
                             cst.ClassDef, cst.Lambda)) and node is not last and node is not function:
            return None
    if isinstance(last.value, cst.Dict):
        return (None, last.value) if _feed_keys(last.value) else None
    if not isinstance(last.value, cst.Name):
        return None
    name = last.value.value
    bindings = [s.body[0] for s in body[:-1] if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                and isinstance(s.body[0], cst.Assign) and _binds(s.body[0], name)]
    if len(bindings) != 1 or len(bindings[0].targets) != 1 or not isinstance(bindings[0].value, cst.Dict) \
            or not _feed_keys(bindings[0].value) or _bound_count(function, name) != 1:
        return None
    if len([node for node in load_names(function.body) if node.value == name]) != 2:
        return None  # read or changed between its binding and the return
    return name, bindings[0].value


def _feed_keys(value: cst.Dict) -> bool:
    """Keys that are names or attributes (`images_pl`, `model.x`): graph values, not a dict of settings."""
    return bool(value.elements) and all(isinstance(e, cst.DictElement) and isinstance(e.key, (cst.Name, cst.Attribute))
                                        for e in value.elements)


def _binds(assign: cst.Assign, name: str) -> bool:
    return any(isinstance(t.target, cst.Name) and t.target.value == name for t in assign.targets)


def _bound_count(function: cst.FunctionDef, name: str) -> int:
    return len([node for node in _binding_targets(function) if node == name])


def _binding_targets(function: cst.FunctionDef) -> list[str]:
    """Every name the body binds, once per binding (assignments, loop and `with` targets, imports...)."""
    names = []
    for node in walk_outside_functions(function.body):
        targets = ()
        if isinstance(node, (cst.Assign,)):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        for target in targets:
            names.extend(_target_names(target))
    return names


def _target_names(target: cst.CSTNode) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _locals(function: cst.FunctionDef) -> list[str]:
    return list(dict.fromkeys([p.name.value for p in function.params.params] + _binding_targets(function)))


def _plain_feed_code(resolver, function: cst.FunctionDef) -> bool:
    """No TensorFlow beyond its Python utilities (the values are computed, not graph), no `import`,
    no default that is not a constant."""
    for node in walk_outside_functions(function.body):
        if isinstance(node, (cst.Import, cst.ImportFrom, cst.Del)):
            return False
    for call in calls_under(function.body):
        name = resolver.tf_name(call.func)
        if name is not None and categorize(name)[0] is not Category.PYTHON:
            return False
    return all(p.default is None or _is_plain_constant(p.default) for p in function.params.params)


def _is_plain_constant(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString))


def _calls(resolver, function: cst.FunctionDef) -> list[FeedCall] | None:
    """Each call of `function`, where it can be written out; None when one cannot or the function is
    used otherwise."""
    name = function.name.value
    assignments = resolver.scope(function).assignments[name]
    if len(assignments) != 1 or next(iter(assignments)).node is not function:
        return None
    params = [p.name.value for p in function.params.params]
    calls = []
    for access in next(iter(assignments)).references:
        call = resolver.parent(access.node)
        if not (isinstance(call, cst.Call) and call.func is access.node) or _inside(resolver, call, function):
            return None
        if any(arg.star for arg in call.args) or not _binds_all(call, function, params):
            return None
        feed_call = _feed_call(resolver, call)
        if feed_call is None:
            return None
        calls.append(feed_call)
    return calls


def _inside(resolver, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    current = resolver.parent(node)
    while current is not None:
        if current is function:
            return True
        current = resolver.parent(current)
    return False


def _binds_all(call: cst.Call, function: cst.FunctionDef, params: list[str]) -> bool:
    """Every parameter is given an argument or has a default, and no argument is left over."""
    known = [arg for arg in call.args if arg.keyword is None or arg.keyword.value in params]
    if len(known) != len(call.args) or len([a for a in call.args if a.keyword is None]) > len(params):
        return False
    return all(bound_argument(call, params, p.name.value) is not None or p.default is not None
               for p in function.params.params)


def _feed_call(resolver, call: cst.Call) -> FeedCall | None:
    """Where `call` stands: the whole value of `name = call`, or an argument of calls a statement makes
    (`print(i, sess.run(fetches, feed_dict=call))`), evaluated after nothing that has effects."""
    parent = resolver.parent(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        line = _line_of(resolver, parent)
        return FeedCall(call, line, parent.targets[0].target.value) if line is not None else None
    value = call
    while isinstance(parent, cst.Arg):
        outer = resolver.parent(parent)
        if not isinstance(outer, cst.Call) or not _evaluated_first(outer, parent):
            return None
        value, parent = outer, resolver.parent(outer)
    if value is call or not (isinstance(parent, (cst.Assign, cst.AugAssign, cst.Expr)) and parent.value is value):
        return None
    line = _line_of(resolver, parent)
    return FeedCall(call, line, None) if line is not None else None


def _line_of(resolver, small: cst.BaseSmallStatement) -> cst.SimpleStatementLine | None:
    line = resolver.parent(small)
    holder = resolver.parent(line) if isinstance(line, cst.SimpleStatementLine) else None
    if isinstance(holder, (cst.IndentedBlock, cst.Module)) and len(line.body) == 1:
        return line
    return None


def _evaluated_first(outer: cst.Call, argument: cst.Arg) -> bool:
    """Whether nothing `outer` evaluates before `argument` can have effects: its callee and its other
    arguments are names, attributes, subscripts, literals, or displays of them."""
    before = [outer.func, *(arg.value for arg in outer.args if arg is not argument)]
    return not any(isinstance(node, _EFFECTS) for part in before for node in walk(part))


def _shadowed(resolver, function: cst.FunctionDef, calls: list[FeedCall]) -> bool:
    """Whether a call stands where a name the body reads from outside means something else."""
    own = set(_locals(function))
    free = {node.value for node in load_names(function.body)} - own
    defined_in = resolver.scope(function)
    for feed_call in calls:
        scope = resolver.scope(feed_call.line)
        if scope is not defined_in and any(name in scope.assignments for name in free):
            return True
    return False


def _written_out(resolver, feed: FeedFunction, feed_call: FeedCall, taken: set[str], also_used: set[str],
                 earlier: set[str]) -> tuple[dict[str, str], dict]:
    """The names the function's locals take at one call, and the replacements writing it out there.
    A local the calling code uses (`also_used`: names other rewrites write into it) becomes
    `<function>_<name>`; one an earlier call written out in the same code binds (`earlier`), a fresh
    `<name>_<n>`, so that each call's values are its own. The body is made from the call as rewritten
    (its arguments may read names other rewrites renamed), which libcst hands over before the line."""
    call, line = feed_call.call, feed_call.line
    used = _names_outside(_caller(resolver, line), feed.function) | also_used
    renames = {}
    for name in _locals(feed.function):
        if name in used:
            renames[name] = fresh_name(f"{feed.function.name.value}_{name}", taken)
        elif name in earlier:
            renames[name] = fresh_name(name, taken)
        else:
            renames[name] = name
            taken.add(name)
    target = feed_call.target or fresh_name("feed_dict", taken)

    def statements(updated_call: cst.Call) -> list[cst.BaseStatement]:
        written = _body_at(feed, updated_call, dict(renames), target)
        return [written[0].with_changes(leading_lines=line.leading_lines), *written[1:]]

    if feed_call.target is not None:
        return renames, {id(line): lambda updated: cst.FlattenSentinel(statements(updated.body[0].value))}
    rewritten = {}

    def taken_call(updated: cst.Call) -> cst.Name:
        rewritten["call"] = updated
        return cst.Name(target)

    return renames, {id(call): taken_call,
                     id(line): lambda updated: cst.FlattenSentinel([*statements(rewritten["call"]),
                                                                    updated.with_changes(leading_lines=())])}


def _body_at(feed: FeedFunction, call: cst.Call, renames: dict[str, str], target: str) -> list[cst.BaseStatement]:
    """The function's body as it runs for `call`, its dict bound to `target`."""
    bindings = []
    for index, arg in enumerate(call.args):
        parameter = arg.keyword.value if arg.keyword else feed.params[index]
        if isinstance(arg.value, cst.Name) and arg.value.value not in ("True", "False", "None") \
                and _bound_count(feed.function, parameter) == 0:
            renames[parameter] = arg.value.value  # a variable of the caller: read where the body reads it
        else:
            bindings.append(_assign(renames[parameter], arg.value))
    for param in feed.function.params.params:
        if bound_argument(call, feed.params, param.name.value) is None:
            bindings.append(_assign(renames[param.name.value], param.default))
    *body, returned = [s.deep_clone().visit(LocalRenamer(renames)) for s in _body(feed.function)]
    if feed.result is None:
        body.append(_assign(target, returned.body[0].value))
    else:
        body = [_retargeted(s, renames[feed.result], target) for s in body]
    return bindings + body


def _names_outside(caller: cst.CSTNode, function: cst.FunctionDef) -> set[str]:
    """The names `caller`'s code uses, parameters included, outside the definition of `function`."""
    inside = {id(node) for node in walk(function)}
    return {node.value for node in load_names(caller, parameters=True) if id(node) not in inside}


def _caller(resolver, line: cst.SimpleStatementLine) -> cst.CSTNode:
    """The function (or module) whose code `line` is."""
    current = resolver.parent(line)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
        current = resolver.parent(current)
    return current if current is not None else resolver.module


def _assign(name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def _retargeted(statement: cst.BaseStatement, name: str, target: str) -> cst.BaseStatement:
    """`name = {...}` (the returned dict's binding) bound to `target` instead."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and _binds(small, name) and isinstance(small.value, cst.Dict):
        return statement.with_changes(body=[small.with_changes(targets=[cst.AssignTarget(cst.Name(target))])])
    return statement
