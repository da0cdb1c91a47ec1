"""`variable_summaries(var)` (TensorFlow's TensorBoard tutorial): a module-level function that only
attaches summaries to the tensor it is given, called as a statement of its own.

TF1 ran its body at each call, adding summary ops (tagged with the name scopes open at the call) to
the collection that `merge_all()` joins. Each call statement becomes the function's body, its
parameters replaced by the call's arguments (plain names: nothing is evaluated twice) and its local
names by names of their own per call (`Wx_mean`: the summary conversion reads a summary's value by
name, transforms/graph/outputs/summaries.py), and the function goes: its summaries live in the
step functions that fetch the merge. Read so only: a body of summary calls, `with` blocks around
them and assignments to names, and a function used by nothing but such call statements."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transforms.common.graph_symbols import Category, categorize
from transforms.common.syntax import LocalRenamer, fresh_name, load_names, walk
from transforms.graph.sessions.session_helpers import bound_argument


@dataclass
class SummaryHelper:
    function: cst.FunctionDef
    params: list[str]
    locals: list[str]                      # names its body binds
    calls: list[cst.SimpleStatementLine]   # `variable_summaries(Wx)` lines


def find_summary_helpers(resolver) -> list[SummaryHelper]:
    helpers = []
    for function in resolver.module.body:
        if isinstance(function, cst.FunctionDef) and _only_summaries(resolver, function):
            calls = _call_lines(resolver, function)
            if calls and not _rebinds_parameters(function) and not _shadowed(resolver, function, calls):
                helpers.append(SummaryHelper(function, [p.name.value for p in function.params.params],
                                             _bound_names(function), calls))
    return helpers


def summary_helper_replacements(helpers: list[SummaryHelper], taken: set[str]) -> dict:
    """Replacements putting each helper's body at its calls and removing its definition."""
    replacements = {}
    for helper in helpers:
        replacements[id(helper.function)] = lambda _: cst.RemovalSentinel.REMOVE
        for line in helper.calls:
            body = _inlined(helper, line, taken)
            replacements[id(line)] = lambda _, body=body: cst.FlattenSentinel(body)
    return replacements


def _inlined(helper: SummaryHelper, line: cst.SimpleStatementLine, taken: set[str]) -> list[cst.BaseStatement]:
    call = line.body[0].value
    arguments = {p: bound_argument(call, helper.params, p).value.value for p in helper.params}
    prefix = "_".join(arguments.values())
    renames = {**arguments, **{name: fresh_name(f"{prefix}_{name}", taken) for name in helper.locals}}
    statements = [s.deep_clone().visit(LocalRenamer(renames)) for s in _body(helper.function)]
    statements[0] = statements[0].with_changes(leading_lines=line.leading_lines)
    return statements


def _body(function: cst.FunctionDef) -> list[cst.BaseStatement]:
    statements = list(function.body.body)
    first = statements[0]
    if (isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr)
            and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))):
        statements = statements[1:]  # the docstring
    return statements


def _only_summaries(resolver, function: cst.FunctionDef) -> bool:
    params = function.params
    if (params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg or params.kwonly_params
            or params.posonly_params or any(p.default for p in params.params) or function.decorators):
        return False
    if not isinstance(function.body, cst.IndentedBlock) or not _body(function):
        return False
    kinds = [_statement_kind(resolver, s) for s in _body(function)]
    return None not in kinds and "summary" in kinds


def _statement_kind(resolver, statement: cst.BaseStatement) -> str | None:
    """'summary', 'assign' or 'with' (holding only such statements); None for anything else."""
    if isinstance(statement, cst.With):
        kinds = [_statement_kind(resolver, s) for s in statement.body.body] \
            if isinstance(statement.body, cst.IndentedBlock) else [None]
        scoped = all(isinstance(item.item, cst.Call) and _category(resolver, item.item) is Category.SCOPE
                     and item.asname is None for item in statement.items)
        return ("summary" if "summary" in kinds else "with") if scoped and None not in kinds else None
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return "assign"
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
            and _category(resolver, small.value) is Category.SUMMARY:
        return "summary"
    return None


def _category(resolver, call: cst.Call) -> Category | None:
    name = resolver.tf_name(call.func)
    return categorize(name)[0] if name else None


def _bound_names(function: cst.FunctionDef) -> list[str]:
    names = []
    for statement in _walk_statements(_body(function)):
        small = statement.body[0]
        if isinstance(small, cst.Assign):
            names.append(small.targets[0].target.value)
    return list(dict.fromkeys(names))


def _walk_statements(statements):
    for statement in statements:
        if isinstance(statement, cst.With):
            yield from _walk_statements(statement.body.body)
        else:
            yield statement


def _call_lines(resolver, function: cst.FunctionDef) -> list[cst.SimpleStatementLine] | None:
    """The lines calling `function` (`helper(name, ...)` alone on a line, every parameter bound to a
    plain name); None when it is used any other way."""
    scope = resolver.scope(function)
    name = function.name.value
    params = [p.name.value for p in function.params.params]
    lines = []
    for assignment in scope.assignments[name]:
        if assignment.node is not function:
            return None
        for access in assignment.references:
            call = resolver.parent(access.node)
            expression = resolver.parent(call) if isinstance(call, cst.Call) else None
            line = resolver.parent(expression) if isinstance(expression, cst.Expr) else None
            if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and call.func is access.node):
                return None
            if not _plain_arguments(call, params):
                return None
            lines.append(line)
    return lines


def _plain_arguments(call: cst.Call, params: list[str]) -> bool:
    if len(call.args) != len(params) or any(arg.star for arg in call.args):
        return False
    bound = [bound_argument(call, params, p) for p in params]
    return all(arg is not None and isinstance(arg.value, cst.Name) for arg in bound)


def _rebinds_parameters(function: cst.FunctionDef) -> bool:
    return bool(set(_bound_names(function)) & {p.name.value for p in function.params.params})


def _shadowed(resolver, function: cst.FunctionDef, calls: list[cst.SimpleStatementLine]) -> bool:
    """Whether a call stands where a global name the body reads means something else."""
    own = set(_bound_names(function)) | {p.name.value for p in function.params.params}
    free = {node.value for node in load_names(function.body)} - own
    module_scope = resolver.scope(function)
    return any(name in resolver.scope(line).assignments for line in calls if resolver.scope(line) is not module_scope
               for name in free)


def taken_names(module: cst.Module) -> set[str]:
    return {node.value for node in walk(module) if isinstance(node, cst.Name)}
