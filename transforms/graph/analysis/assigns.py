"""Variable assignment ops in graph code: `update = tf.assign(variable, value)`, `tf.assign_add`,
`tf.assign_sub`, and the variable's own `variable.assign(value)` methods.

TF1 ran an assignment only in the session runs that fetched it or a value computed from it, while a
tf.function runs every stateful op it holds. The statement stays a graph statement like any other, so
the planner's backward slice (writing/plan.py) puts it only into the step functions of the runs that
need it, written `variable.assign(value)` (what tf.compat.v1.assign calls on a resource variable).
Within one run TF1 fixed no order between an assignment and the ops that read or update its variable
without a data path to it, where a tf.function follows program order: such runs are refused
(check_assignment_order), as are assignments anywhere but as a statement of their own.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category, assign_method
from transforms.common.syntax import Refusal, code, load_names
from transforms.graph.analysis.model import GraphBlock, Item, Kind

ASSIGN_METHODS = ("assign", "assign_add", "assign_sub")
_KEPT_KEYWORDS = ("use_locking", "name")  # same meaning for the tf.assign* functions and the methods


def assignment_outside_statement(what: str, in_function: bool = False) -> str:
    where = " inside a function definition" if in_function else ""
    return (f"{what}{where}: assignments are converted only as graph statements of their own on a variable "
            f"bound to a name (`update = tf.assign(variable, value)`)")


class AssignReader:
    """Recognises `name = <assignment of a block variable>` lines for the scanner."""

    def __init__(self, scanner) -> None:
        self.scanner = scanner

    def convert(self, item: Item, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """Make the line a graph statement assigning with the variable's method; False for other lines."""
        found = self._assignment(value) if isinstance(value, cst.Call) else None
        if found is None:
            return False
        variable, method, arguments = found
        if not isinstance(target, cst.Name):
            raise Refusal(target, "the result of a variable assignment bound to something other than a name")
        small = item.node.body[0]
        rewritten = cst.Call(func=cst.Attribute(value=variable, attr=cst.Name(method)), args=arguments)
        item.body = item.node.with_changes(body=[small.with_changes(value=rewritten)])
        self.scanner.block.assigns[item.index] = variable.value
        # the arguments' own nodes, so layer calls and renames in them are found in the rewritten body
        values = cst.List([cst.Element(argument.value) for argument in arguments])
        self.scanner.graph_statement(item, (target.value,), values, extra_reads={variable.value})
        return True

    def _assignment(self, call: cst.Call) -> tuple[cst.Name, str, list[cst.Arg]] | None:
        """(variable, method, arguments of the method) for an assignment call, None for other calls."""
        tf_name, category, _ = self.scanner.analyzer.category(call.func)
        if category is Category.ASSIGN:
            return self._function_form(call, tf_name)
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ASSIGN_METHODS and self._is_variable(func.value):
            for argument in call.args:
                if argument.keyword is not None and argument.keyword.value not in _KEPT_KEYWORDS + ("value", "delta"):
                    raise Refusal(argument, f"'{code(func)}' with {argument.keyword.value}= is not modelled")
            return func.value, func.attr.value, list(call.args)
        return None

    def _function_form(self, call: cst.Call, tf_name: str) -> tuple[cst.Name, str, list[cst.Arg]]:
        positional = [argument for argument in call.args if argument.keyword is None]
        keywords = {argument.keyword.value: argument for argument in call.args if argument.keyword is not None}
        unknown = set(keywords) - {"ref", "value"} - set(_KEPT_KEYWORDS)
        if len(positional) > 2 or unknown:
            raise Refusal(call, f"{tf_name} with arguments other than (ref, value, use_locking, name) is not modelled")
        variable = positional[0].value if positional else getattr(keywords.get("ref"), "value", None)
        value = positional[1].value if len(positional) > 1 else getattr(keywords.get("value"), "value", None)
        if value is None or not self._is_variable(variable):
            raise Refusal(call, f"{tf_name} of '{code(variable) if variable is not None else '?'}', which is not "
                                f"a tf.Variable bound to a name in the graph code")
        kept = [keywords[name].with_changes(comma=cst.MaybeSentinel.DEFAULT) for name in _KEPT_KEYWORDS
                if name in keywords]
        return variable, assign_method(tf_name), [cst.Arg(value), *kept]

    def _is_variable(self, node: cst.BaseExpression | None) -> bool:
        return (isinstance(node, cst.Name) and self.scanner.kinds.get(node.value) is Kind.VARIABLE
                and self.scanner.resolver.is_block_reference(node))


def check_assignment_order(functions, block: GraphBlock, planner) -> None:
    """Refuses a step function holding an assignment that other work of the same run reads or updates
    without a data path between them (TF1 ran them in any order)."""
    for function in functions:
        for index in function.items:
            if index in block.assigns:
                _check_assignment(function, index, block, planner)


def _check_assignment(function, index: int, block: GraphBlock, planner) -> None:
    variable, item = block.assigns[index], block.items[index]
    name = item.defines[0]
    before = planner.upstream(index)
    if variable in function.sites[0].reads:
        raise Refusal(item.node, f"'{variable}' is fetched in the same session run as its assignment '{name}': "
                                 "TF1 fixes no order between them")
    if function.train_op is not None:
        _check_beside_train_op(function, index, before, block, planner)
    work = list(function.items) + ([block.last_definition(function.train_op.name)] if function.train_op else [])
    for other in work:
        if other != index and other not in before and variable in planner.reads_of(other):
            raise Refusal(item.node, f"'{_label(block, other)}' reads '{variable}' in the same session run as its "
                                     f"assignment '{name}' without depending on it: TF1 fixes no order between them")


def _check_beside_train_op(function, index: int, before: set[int], block: GraphBlock, planner) -> None:
    variable, item = block.assigns[index], block.items[index]
    train_op = function.train_op
    if index in function.loss_slice:
        raise Refusal(item.node, f"the loss of train op '{train_op.name}' depends on the assignment "
                                 f"'{item.defines[0]}'")
    updated = set(planner.trainable(function)) | {train_op.global_step} - {None}
    if train_op.var_list is not None:
        updated |= {node.value for node in load_names(train_op.var_list)}
    read = set().union(*(planner.reads_of(i) for i in before | {index}))
    clash = sorted((read | {variable}) & updated)
    if clash:
        raise Refusal(item.node, f"the assignment '{item.defines[0]}' runs in the same session run as train op "
                                 f"'{train_op.name}', which updates {', '.join(repr(n) for n in clash)}: TF1 "
                                 "fixes no order between them")


def _label(block: GraphBlock, index: int) -> str:
    item = block.items[index]
    return ", ".join(item.defines) if item.defines else code(item.node).strip()
