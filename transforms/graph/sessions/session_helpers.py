"""Functions the program's session is passed to, e.g.

    def evaluate(sess, features):
        return sess.run(loss, feed_dict={x: features})

    ...    print(evaluate(sess, data))

When every call passes the program's one session (a name bound to nothing else), and the function
only runs it (`<param>.run(...)`), the parameter is dropped from the function and from its calls
and the function reads the session by its own name: its runs are then ordinary run sites of the
block (a nested function when the block is a function such as `main()`: a module-level helper
called only from there moves into it, before its first call, so it sees the step functions).
Anything else done with the session parameter is left for TFM201's usual refusal."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import Refusal, calls_under, load_names


@dataclass
class SessionHelper:
    function: cst.FunctionDef
    params: list[str]
    calls: list[cst.Call]
    caller: cst.CSTNode                     # the Module or FunctionDef whose code calls it
    removed: set[str] = field(default_factory=set)  # parameters dropped (the session, a graph dict)
    renames: dict[str, cst.BaseExpression] = field(default_factory=dict)  # id(Name) -> replacement

    @property
    def moves(self) -> bool:
        """Whether it moves into the function that calls it (it is defined at module level)."""
        return isinstance(self.caller, cst.FunctionDef) and self.caller is not self.function \
            and not any(statement is self.function for statement in self.caller.body.body)


def session_name(resolver) -> str | None:
    """The name the program's one session is bound to (None: no single named session)."""
    names = set()
    for node in calls_under(resolver.module):
        name = resolver.tf_name(node.func)
        if not (name and categorize(name)[0] is Category.SESSION):
            continue
        holder = resolver.parent(node)
        target = holder.asname.name if isinstance(holder, cst.WithItem) and holder.asname else \
            holder.targets[0].target if isinstance(holder, cst.Assign) and len(holder.targets) == 1 else None
        if not isinstance(target, cst.Name):
            return None
        names.add(target.value)
    return names.pop() if len(names) == 1 else None


def session_helpers(resolver, session: str) -> dict[str, SessionHelper]:
    """Module-level functions called with the session as an argument, checked (Refusal otherwise)."""
    helpers: dict[str, SessionHelper] = {}
    for node in calls_under(resolver.module):
        if not isinstance(node.func, cst.Name):
            continue
        if not any(isinstance(arg.value, cst.Name) and arg.value.value == session for arg in node.args):
            continue
        function = _module_function(resolver, node.func.value) or _nested_function(resolver, node)
        if function is None or function.name.value in helpers:
            continue
        helpers[function.name.value] = _helper(resolver, function, session)
    return helpers


def _module_function(resolver, name: str) -> cst.FunctionDef | None:
    found = [s for s in resolver.module.body if isinstance(s, cst.FunctionDef) and s.name.value == name]
    return found[0] if len(found) == 1 else None


def _nested_function(resolver, call: cst.Call) -> cst.FunctionDef | None:
    """The function `call` calls when it is defined in the body of the module-level function making
    the call (the TensorFlow MNIST tutorial's `eval_in_batches(data, sess)` inside `main()`)."""
    owner = owner_of(resolver, call)
    if not isinstance(owner, cst.FunctionDef):
        return None
    found = [s for s in owner.body.body if isinstance(s, cst.FunctionDef) and s.name.value == call.func.value]
    return found[0] if len(found) == 1 else None


def _helper(resolver, function: cst.FunctionDef, session: str) -> SessionHelper:
    name = function.name.value
    params = plain_parameters(function)
    calls = []
    for assignment in resolver.scope(function).assignments[name]:
        if assignment.node is not function:
            raise Refusal(assignment.node, f"'{name}', which runs the session, is rebound")
        for access in assignment.references:
            call = resolver.parent(access.node)
            if not (isinstance(call, cst.Call) and call.func is access.node):
                raise Refusal(access.node, f"'{name}' runs the session and is used other than by calling it")
            calls.append(call)
    owners = {id(owner_of(resolver, call)): owner_of(resolver, call) for call in calls}
    if len(owners) != 1:
        raise Refusal(function, f"'{name}' runs the session and is called from several functions")
    helper = SessionHelper(function, params, calls, next(iter(owners.values())))
    if helper.caller is function:
        raise Refusal(function, f"'{name}' runs the session and calls itself")
    parameter = _session_parameter(resolver, helper, session)
    _check_session_uses(resolver, helper, parameter, session)
    helper.removed.add(parameter)
    return helper


def plain_parameters(function: cst.FunctionDef) -> list[str]:
    parameters = function.params
    if isinstance(parameters.star_arg, cst.Param) or parameters.star_kwarg or parameters.kwonly_params \
            or parameters.posonly_params:
        raise Refusal(function, f"'{function.name.value}' has */** or keyword-only parameters")
    return [p.name.value for p in parameters.params]


def bound_argument(call: cst.Call, params: list[str], parameter: str) -> cst.Arg | None:
    """The argument of `call` that binds `parameter`."""
    for index, arg in enumerate(call.args):
        if arg.star:
            raise Refusal(arg, "a call with *args/**kwargs hides which argument is the session or graph")
        if (arg.keyword is None and index < len(params) and params[index] == parameter) or \
                (arg.keyword is not None and arg.keyword.value == parameter):
            return arg
    return None


def owner_of(resolver, node: cst.CSTNode) -> cst.CSTNode:
    """The module or the module-level function whose code `node` is."""
    current = resolver.parent(node)
    while current is not None and not isinstance(current, cst.Module):
        if isinstance(current, cst.FunctionDef) and isinstance(resolver.parent(current), cst.Module):
            return current
        current = resolver.parent(current)
    return resolver.module


def _session_parameter(resolver, helper: SessionHelper, session: str) -> str:
    """The parameter every call passes the session to."""
    chosen = set()
    for call in helper.calls:
        passed = [p for p in helper.params if (arg := bound_argument(call, helper.params, p)) is not None
                  and isinstance(arg.value, cst.Name) and arg.value.value == session]
        if len(passed) != 1 or not _is_session_binding(resolver, bound_argument(call, helper.params, passed[0]).value):
            raise Refusal(call, f"'{helper.function.name.value}' is not passed the program's session the same way "
                                "in every call")
        chosen.add(passed[0])
    if len(chosen) != 1:
        raise Refusal(helper.calls[0], f"'{helper.function.name.value}' gets the session in different parameters")
    return chosen.pop()


def _is_session_binding(resolver, node: cst.Name) -> bool:
    scope = resolver.scope(node)
    assignments = scope[node.value] if scope is not None else set()
    return bool(assignments) and all(id(a.node) in resolver.session_targets for a in assignments)


def _check_session_uses(resolver, helper: SessionHelper, parameter: str, session: str) -> None:
    name = helper.function.name.value
    scope = resolver.scope(helper.function.body.body[0])
    if session != parameter and session in {n.value for n in load_names(helper.function.body)}:
        raise Refusal(helper.function, f"'{name}' uses the name '{session}' for something else than the session")
    for assignment in scope.assignments[parameter]:
        if not isinstance(assignment.node, cst.Param):
            raise Refusal(assignment.node, f"'{name}' rebinds its session parameter '{parameter}'")
        for access in assignment.references:
            attribute = resolver.parent(access.node)
            call = resolver.parent(attribute)
            if not (isinstance(attribute, cst.Attribute) and attribute.attr.value == "run"
                    and isinstance(call, cst.Call) and call.func is attribute):
                raise Refusal(access.node, f"'{name}' does more with the session '{parameter}' than run it")
            if session != parameter:
                helper.renames[id(access.node)] = cst.Name(session)


def read_passed_names(resolver, helper: SessionHelper, renamed: dict[str, str]) -> None:
    """A parameter every call passes the same graph value of the calling code, a name bound once there
    by graph code (TensorFlow's tutorial `do_eval(sess, eval_correct, images_placeholder, ...)`), goes:
    the helper, defined in the calling code or moving into it, reads that name itself (`renamed`: the
    name it takes there, when a graph builder's result is renamed), so the graph values it gets are
    the block's own."""
    if isinstance(helper.caller, cst.Module):
        return
    caller_scope = resolver.scope(helper.caller.body.body[0])
    scope = resolver.scope(helper.function.body.body[0])
    own = {assignment.name for assignment in scope.assignments}
    for parameter in helper.params:
        if parameter in helper.removed:
            continue
        passed = {_passed_name(call, helper.params, parameter) for call in helper.calls}
        name = passed.pop() if len(passed) == 1 else None
        if name is None or (name in own and name != parameter) or len(caller_scope.assignments[name]) != 1 \
                or not _bound_by_graph_code(resolver, next(iter(caller_scope.assignments[name])).node):
            continue
        if any(not isinstance(assignment.node, cst.Param) for assignment in scope.assignments[parameter]):
            continue
        helper.removed.add(parameter)
        for assignment in scope.assignments[parameter]:
            for access in assignment.references:
                helper.renames[id(access.node)] = cst.Name(renamed.get(name, name))


def _passed_name(call: cst.Call, params: list[str], parameter: str) -> str | None:
    argument = bound_argument(call, params, parameter)
    return argument.value.value if argument is not None and isinstance(argument.value, cst.Name) else None


def _bound_by_graph_code(resolver, target: cst.CSTNode) -> bool:
    """Whether the assignment binding `target` calls TensorFlow beyond its Python utilities, or the
    program's own functions or classes (a model, a graph builder)."""
    assign = resolver.parent(target)
    while assign is not None and not isinstance(assign, (cst.Assign, cst.BaseCompoundStatement)):
        assign = resolver.parent(assign)
    if not isinstance(assign, cst.Assign):
        return False
    program = {s.name.value for s in resolver.module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    for call in calls_under(assign.value):
        name = resolver.tf_name(call.func)
        if name is not None and categorize(name)[0] is not Category.PYTHON:
            return True
        if isinstance(call.func, cst.Name) and call.func.value in program:
            return True
    return False
