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

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from transforms.common.syntax import (NodeOrigins, Refusal, bind_arguments, is_constant, is_docstring, load_names,
                                      only_small_statement, walk)


@dataclass
class _Method:
    node: cst.FunctionDef
    self_name: str
    calls: list[cst.SimpleStatementLine] = field(default_factory=list)  # statements `[x =] self.m(...)`
    references: int = 0  # `self.m` anywhere in the class's methods
    called: int = 0  # of those, calls `self.m(...)`
    referrers: set[str] = field(default_factory=set)  # the methods using `self.m`
    caller: _Method | None = None  # the method written out where this one's call is (None: __init__)
    renamed: dict[str, str] = field(default_factory=dict)  # local -> the name it takes in __init__


@dataclass
class _Inlining:
    """What writing the methods out changes: per original node, how its rebuilt version is made."""

    replacements: dict = field(default_factory=dict)
    origins: NodeOrigins = field(default_factory=NodeOrigins)


def methods_inlined(resolver, class_node: cst.ClassDef) -> _Inlining | None:
    """The replacements writing out the graph methods of `class_node` in its `__init__`; None when
    `__init__` calls none that can be."""
    methods = _methods(class_node)
    init = methods.pop("__init__", None)
    if init is None:
        return None
    for caller in [init, *methods.values()]:
        _find_calls(caller, methods)
    inlinable = _written_out_from(init, methods)
    helpers = _nested_helpers(init, methods, inlinable)
    if not inlinable and not helpers and not any(_is_early_return(s) for s in init.node.body.body):
        return None
    inlining = _Inlining()
    _plan_locals(resolver, init, inlinable, inlining)
    _check_helper_names(resolver, init, inlinable, helpers)
    for helper in helpers.values():
        for caller in [init, *inlinable.values(), *helpers.values()]:
            for node in walk(caller.node.body):
                if isinstance(node, cst.Call) and _is_method(node.func, caller.self_name, {helper.node.name.value: 0}):
                    inlining.replacements[id(node.func)] = lambda _, name=helper.node.name.value: cst.Name(name)
    inlining.replacements[id(class_node)] = lambda updated: _rebuilt_class(class_node, updated, init, inlinable,
                                                                           helpers, inlining.origins)
    return inlining


def _methods(class_node: cst.ClassDef) -> dict[str, _Method]:
    methods = {}
    for member in class_node.body.body:
        if isinstance(member, cst.FunctionDef) and not member.decorators and member.params.params:
            methods[member.name.value] = _Method(member, member.params.params[0].name.value)
    return methods


def _find_calls(caller: _Method, methods: dict[str, _Method]) -> None:
    """Count the uses `self.m` in `caller`, and record its statements `[x =] self.m(...)` (in the body or
    in if / else branches)."""
    for node in walk(caller.node.body):
        if isinstance(node, cst.Attribute) and _is_method(node, caller.self_name, methods):
            methods[node.attr.value].references += 1
            methods[node.attr.value].referrers.add(caller.node.name.value)
        elif isinstance(node, cst.Call) and _is_method(node.func, caller.self_name, methods):
            methods[node.func.attr.value].called += 1
    for statement in _statements(caller.node.body):
        name = _called_method(statement, caller.self_name)
        if name in methods:
            methods[name].calls.append(statement)


def _is_method(node: cst.CSTNode, self_name: str, methods: dict[str, _Method]) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == self_name \
        and node.attr.value in methods


def _written_out_from(init: _Method, methods: dict[str, _Method]) -> dict[str, _Method]:
    """The methods written out in `__init__`: reached from it by call statements, each through its only
    use, with one that can be written out (transitively)."""
    chosen: dict[str, _Method] = {}
    callers = [init]
    while callers:
        caller = callers.pop()
        for statement in _statements(caller.node.body):
            name = _called_method(statement, caller.self_name)
            method = methods.get(name)
            if method is not None and name not in chosen and _writable_out(method, caller.self_name):
                method.caller = caller if caller is not init else None
                chosen[name] = method
                callers.append(method)
    return chosen


def _nested_helpers(init: _Method, methods: dict[str, _Method], inlinable: dict[str, _Method]) -> dict[str, _Method]:
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


def _is_helper(method: _Method, init: _Method) -> bool:
    node = method.node
    if method.self_name != init.self_name or node.name.value.startswith("__"):
        return False
    if any(isinstance(n, (cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.ClassDef)) for n in walk(node.body)):
        return False
    return not any(isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and isinstance(n.target, cst.Attribute)
                   and isinstance(n.target.value, cst.Name) and n.target.value.value == method.self_name
                   for n in walk(node.body))


def _check_helper_names(resolver, init: _Method, inlinable: dict[str, _Method], helpers: dict[str, _Method]) -> None:
    """Nested in `__init__`, a helper's name is one of its locals, and the names it reads from the module
    are read through `__init__`'s: neither may clash with what `__init__` (methods written out included)
    binds or reads."""
    if not helpers:
        return
    bound = {a.name for a in resolver.scope(init.node.body.body[0]).assignments} | {n.value for n in load_names(
        init.node.body)}
    for method in inlinable.values():
        scope = resolver.scope(method.node.body.body[0])
        bound |= {method.renamed.get(a.name, a.name) for a in scope.assignments} | {
            n.value for n in load_names(method.node.body)}
    for name, helper in helpers.items():
        if name in bound:
            raise Refusal(helper.node, f"'{name}' becomes a function nested in __init__, which already uses the name")
        scope = resolver.scope(helper.node.body.body[0])
        free = {n.value for n in load_names(helper.node.body)} - {a.name for a in scope.assignments}
        captured = sorted(free & ((bound - free_reads(resolver, init, inlinable)) | set(helpers)))
        if captured:
            raise Refusal(helper.node, f"'{name}' reads {', '.join(captured)}, which __init__ binds: nested in "
                                       "__init__ it would read __init__'s value")


def free_reads(resolver, init: _Method, inlinable: dict[str, _Method]) -> set[str]:
    """The names `__init__` and the methods written out there read from the module."""
    reads = set()
    for method in [init, *inlinable.values()]:
        scope = resolver.scope(method.node.body.body[0])
        reads |= {n.value for n in load_names(method.node.body)} - {a.name for a in scope.assignments}
    return reads


def _statements(block: cst.BaseSuite) -> Iterator[cst.BaseStatement]:
    """The statements of a function body, those in if / else branches included."""
    for statement in block.body if isinstance(block, cst.IndentedBlock) else ():
        yield statement
        if isinstance(statement, cst.If):
            yield from _statements(statement.body)
            branch = statement.orelse
            while branch is not None:
                yield from _statements(branch.body)
                branch = branch.orelse if isinstance(branch, cst.If) else None


def _called_method(statement: cst.BaseStatement, self_name: str) -> str | None:
    call = _method_call(statement)
    func = call.func if call is not None else None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self_name:
        return func.attr.value
    return None


def _method_call(statement: cst.BaseStatement) -> cst.Call | None:
    small = only_small_statement(statement)
    if isinstance(small, cst.Expr) or (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return small.value if isinstance(small.value, cst.Call) else None
    return None


def _writable_out(method: _Method, self_name: str) -> bool:
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


def _plan_locals(resolver, init: _Method, methods: dict[str, _Method], inlining: _Inlining) -> None:
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
            for assignment in scope.assignments[local]:
                for node in [assignment.node, *(access.node for access in assignment.references)]:
                    if isinstance(node, cst.Name):
                        inlining.replacements[id(node)] = lambda _, fresh=fresh: cst.Name(fresh)


def _rebuilt_class(original: cst.ClassDef, updated: cst.ClassDef, init: _Method, inlinable: dict[str, _Method],
                   helpers: dict[str, _Method], origins: NodeOrigins) -> cst.ClassDef:
    """The class with the methods' statements in `__init__`, its helpers nested at its start, and
    those methods gone."""
    rebuilt = {id(m): u for m, u in zip(original.body.body, updated.body.body)}
    writer = _Writer(rebuilt, inlinable, origins)
    nested = [_nested(rebuilt[id(helper.node)], helper.node, origins) for helper in helpers.values()]
    members = []
    for member, new in zip(original.body.body, updated.body.body):
        if member is init.node:
            body = writer.block(member.body, new.body, init.self_name, top_level=True)
            docstring = body[:1] if body and is_docstring(member.body.body[0]) else []
            rest = body[len(docstring):]
            if nested and rest:
                rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *rest[0].leading_lines])
            body = _non_empty([*docstring, *nested, *rest])
            new = new.with_changes(body=new.body.with_changes(body=body))
        elif isinstance(member, cst.FunctionDef) and (member.name.value in inlinable or member.name.value in helpers):
            continue
        if new is not member:
            origins.add(new, member)
        members.append(new)
    return updated.with_changes(body=updated.body.with_changes(body=members))


def _nested(updated: cst.FunctionDef, original: cst.FunctionDef, origins: NodeOrigins) -> cst.FunctionDef:
    """A helper method as a function nested in `__init__`: no `self` parameter (it reads `__init__`'s)."""
    params = updated.params.params[1:]
    if params:
        params = [*params[:-1], params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    nested = updated.with_changes(params=updated.params.with_changes(params=params))
    origins.add(nested, original)
    return nested


class _Writer:
    def __init__(self, rebuilt: dict, methods: dict[str, _Method], origins: NodeOrigins) -> None:
        self.rebuilt, self.methods, self.origins = rebuilt, methods, origins

    def block(self, original: cst.IndentedBlock, updated: cst.IndentedBlock, self_name: str,
              top_level: bool = False) -> list:
        """The statements of `updated` with the methods written out; at `__init__`'s top level, an early
        `if <test>: return` becomes `if not <test>:` around the statements after it."""
        statements = []
        pairs = list(zip(original.body, updated.body))
        for index, (statement, new) in enumerate(pairs):
            method = self.methods.get(_called_method(statement, self_name))
            if top_level and _is_early_return(statement) and index + 1 < len(pairs):
                rest = _block_of([s for s, _ in pairs[index + 1:]]), _block_of([n for _, n in pairs[index + 1:]])
                guarded = cst.If(test=_negated(new.test), body=cst.IndentedBlock(
                    body=_non_empty(self.block(*rest, self_name, top_level=True))), leading_lines=new.leading_lines)
                statements.append(self._made(guarded, statement))
                break
            if method is not None:
                statements += self._written_out(statement, new, method)
            elif isinstance(statement, cst.If):
                statements.append(self._made(self._branches(statement, new, self_name), statement))
            else:
                statements.append(new)
        return statements

    def _branches(self, original: cst.If, updated: cst.If, self_name: str) -> cst.If:
        body = updated.body.with_changes(body=_non_empty(self.block(original.body, updated.body, self_name)))
        orelse = updated.orelse
        if isinstance(original.orelse, cst.If):
            orelse = self._branches(original.orelse, updated.orelse, self_name)
        elif original.orelse is not None:
            orelse = updated.orelse.with_changes(body=updated.orelse.body.with_changes(
                body=_non_empty(self.block(original.orelse.body, updated.orelse.body, self_name))))
        return updated.with_changes(body=body, orelse=orelse)

    def _written_out(self, call_statement: cst.SimpleStatementLine, updated: cst.SimpleStatementLine,
                     method: _Method) -> list:
        node, new = method.node, self.rebuilt[id(method.node)]
        statements = [self._made(s, call_statement) for s in _bindings(call_statement, method)]
        body = list(zip(node.body.body, new.body.body))
        if body and is_docstring(body[0][0]):
            body = body[1:]
        returned, return_line = None, None
        if body and isinstance(only_small_statement(body[-1][0]), cst.Return):
            return_line = body[-1][1]
            returned = only_small_statement(return_line).value
            body = body[:-1]
        statements += self.block(_block_of([s for s, _ in body]), _block_of([n for _, n in body]), method.self_name)
        small = only_small_statement(updated)
        comments = {} if return_line is None else {"leading_lines": return_line.leading_lines,
                                                   "trailing_whitespace": return_line.trailing_whitespace}
        if isinstance(small, cst.Assign):
            value = returned if returned is not None else cst.Name("None")
            result = updated.with_changes(body=[small.with_changes(value=value)], **comments)
            statements.append(self._made(result, call_statement))
        elif returned is not None and not isinstance(returned, cst.Name):
            statements.append(self._made(cst.SimpleStatementLine([cst.Expr(returned)], **comments), call_statement))
        if statements:
            first = statements[0]
            statements[0] = first.with_changes(leading_lines=[*updated.leading_lines, *first.leading_lines])
            self.origins.add(statements[0], self.origins.origin(first, first))
        return statements

    def _made(self, statement: cst.BaseStatement, origin: cst.CSTNode) -> cst.BaseStatement:
        self.origins.add(statement, origin)
        return statement


def _is_early_return(statement: cst.BaseStatement) -> bool:
    """`if <test>: return` (nothing else, no else branch): the rest of the function runs only when the
    test is false, which is what `if not <test>:` around the rest says."""
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return False
    body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else statement.body.body
    small = only_small_statement(body[0]) if isinstance(statement.body, cst.IndentedBlock) and len(body) == 1 \
        else (body[0] if len(body) == 1 else None)
    return isinstance(small, cst.Return) and small.value is None


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and not test.lpar:
        return test.expression
    atom = isinstance(test, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or test.lpar
    return cst.UnaryOperation(cst.Not(), test if atom else test.with_changes(lpar=[cst.LeftParen()],
                                                                               rpar=[cst.RightParen()]))


def _non_empty(statements: list) -> list:
    return statements or [cst.SimpleStatementLine([cst.Pass()])]


def _block_of(statements: list) -> cst.IndentedBlock:
    return cst.IndentedBlock(body=statements)


def _bindings(call_statement: cst.SimpleStatementLine, method: _Method) -> list[cst.SimpleStatementLine]:
    """`param = argument` for each parameter of `method` (defaults where the call gives none)."""
    call = _method_call(call_statement)
    params = method.node.params.params[1:]
    values = bind_arguments(call, [param.name.value for param in params], f"'{method.node.name.value}'")
    statements = []
    for param in params:
        name = param.name.value
        value = values.get(name, param.default)
        if value is None:
            raise Refusal(call, f"'{method.node.name.value}' is called without its argument '{name}'")
        if name not in values and not is_constant(value):
            raise Refusal(param, f"'{method.node.name.value}' has a default that is not a literal (made once, "
                                 "when the class was defined)")
        target = method.renamed.get(name, name)
        if isinstance(value, cst.Name) and value.value == target:
            continue
        statements.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], value)]))
    return statements
