"""Variable assignment ops in graph code: `update = tf.assign(variable, value)`, `tf.assign_add`,
`tf.assign_sub`, and the variable's own `variable.assign(value)` methods; also one per variable of a
listed var_list, `clip = [p.assign(tf.clip_by_value(p, -c, c)) for p in theta_D]`.

TF1 ran an assignment only in the session runs that fetched it or a value computed from it, while a
tf.function runs every stateful op it holds. The statement stays a graph statement like any other, so
the planner's backward slice (writing/plan.py) puts it only into the step functions of the runs that
need it, written `variable.assign(value)` (what tf.compat.v1.assign calls on a resource variable).
Within one run TF1 fixed no order between an assignment and the ops that read or update its variable
without a data path to it, where a tf.function follows program order: such runs are refused
(check_assignment_order), as are assignments anywhere but as a statement of their own. The exception
is weight clipping beside the train op updating those weights (WGAN), where TF1's own order varied
from step to step: it is converted with a finding saying which order the step keeps.
"""
from __future__ import annotations

import libcst as cst

from transforms.common.graph_symbols import Category, assign_method
from transforms.common.syntax import Refusal, code, load_names, replace_nodes
from transforms.graph.analysis.listed_names import block_definition, items_definition, listed_names
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
        """Make the line a graph statement assigning with the variables' methods; False for other lines."""
        if isinstance(value, cst.ListComp):
            return self._convert_each(item, target, value)
        found = self._assignment(value) if isinstance(value, cst.Call) else None
        if found is None:
            return False
        variable, method, arguments = found
        self._check_target(target)
        small = item.node.body[0]
        rewritten = cst.Call(func=cst.Attribute(value=variable, attr=cst.Name(method)), args=arguments)
        item.body = item.node.with_changes(body=[small.with_changes(value=rewritten)])
        self.scanner.block.assigns[item.index] = (variable.value,)
        # the arguments' own nodes, so layer calls and renames in them are found in the rewritten body
        values = cst.List([cst.Element(argument.value) for argument in arguments])
        self.scanner.graph_statement(item, (target.value,), values, extra_reads={variable.value})
        return True

    def _convert_each(self, item: Item, target: cst.BaseExpression, comprehension: cst.ListComp) -> bool:
        """`clip = [p.assign(tf.clip_by_value(p, -c, c)) for p in theta_D]`: one assignment per variable of
        a listed var_list, computed from that variable alone (WGAN's weight clipping)."""
        found = self._assignment_per_variable(comprehension)
        if found is None:
            return False
        variables, method, arguments = found
        self._check_target(target)
        loop = comprehension.for_in
        rewritten = comprehension.with_changes(elt=cst.Call(
            func=cst.Attribute(value=loop.target, attr=cst.Name(method)), args=arguments))
        small = item.node.body[0]
        item.body = item.node.with_changes(body=[small.with_changes(value=rewritten)])
        self.scanner.block.assigns[item.index] = tuple(variables)
        # read as the first variable's assignment: the loop variable is no name of the block
        first = {id(node): (lambda _: cst.Name(variables[0])) for node in load_names(rewritten.elt)
                 if node.value == loop.target.value}
        values = cst.List([cst.Element(replace_nodes(argument.value, first)) for argument in arguments]
                          + [cst.Element(loop.iter)])
        self.scanner.graph_statement(item, (target.value,), values, extra_reads=set(variables))
        return True

    def _assignment_per_variable(self, comprehension: cst.ListComp) -> tuple[list[str], str, list[cst.Arg]] | None:
        """(variables, method, arguments) of a comprehension assigning its loop variable; None for other
        comprehensions. One that assigns in another shape is refused: read as plain graph code, its
        assignments would escape the ordering checks."""
        loop, scanner, call = comprehension.for_in, self.scanner, comprehension.elt
        element = loop.target.value if isinstance(loop.target, cst.Name) else None
        if not isinstance(call, cst.Call):
            return None
        tf_name, category, _ = scanner.analyzer.category(call.func)
        is_method = (isinstance(call.func, cst.Attribute) and call.func.attr.value in ASSIGN_METHODS
                     and isinstance(call.func.value, cst.Name) and call.func.value.value == element)
        if category is not Category.ASSIGN and not is_method:
            return None
        if element is None or loop.inner_for_in is not None or loop.ifs or loop.asynchronous:
            raise Refusal(comprehension, "assignments in a comprehension are modelled only as one per variable of a "
                                         "list, `[v.assign(...) for v in var_list]` (one loop variable, no condition "
                                         "or other loop)")
        variables = listed_names(loop.iter, items_definition(scanner.block.definitions, scanner.flattener.items))
        if not variables or any(scanner.kinds.get(name) is not Kind.VARIABLE for name in variables):
            raise Refusal(loop.iter, f"assignments to the elements of '{code(loop.iter)}', which is not a list of "
                                     "the program's variables written out by name")
        if is_method:
            variable, method, arguments = call.func.value, call.func.attr.value, self._method_arguments(call)
        else:
            variable, method, arguments = self._function_form(call, tf_name, each=element)
        if variable.value != element:
            raise Refusal(call, f"'{code(call)}' assigns another variable than the loop's")
        for node in load_names(cst.List([cst.Element(argument.value) for argument in arguments])):
            if node.value != element and scanner.kinds.get(node.value, Kind.PYTHON) is not Kind.PYTHON:
                raise Refusal(node, f"'{code(call)}' computes each variable's new value from '{node.value}': only "
                                    "values computed from the variable itself are modelled")
        return variables, method, arguments

    @staticmethod
    def _check_target(target: cst.BaseExpression) -> None:
        if not isinstance(target, cst.Name):
            raise Refusal(target, "the result of a variable assignment bound to something other than a name")

    def _assignment(self, call: cst.Call) -> tuple[cst.Name, str, list[cst.Arg]] | None:
        """(variable, method, arguments of the method) for an assignment call, None for other calls."""
        tf_name, category, _ = self.scanner.analyzer.category(call.func)
        if category is Category.ASSIGN:
            return self._function_form(call, tf_name)
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ASSIGN_METHODS and self._is_variable(func.value):
            return func.value, func.attr.value, self._method_arguments(call)
        return None

    @staticmethod
    def _method_arguments(call: cst.Call) -> list[cst.Arg]:
        for argument in call.args:
            if argument.keyword is not None and argument.keyword.value not in _KEPT_KEYWORDS + ("value", "delta"):
                raise Refusal(argument, f"'{code(call.func)}' with {argument.keyword.value}= is not modelled")
        return list(call.args)

    def _function_form(self, call: cst.Call, tf_name: str,
                       each: str | None = None) -> tuple[cst.Name, str, list[cst.Arg]]:
        """`tf.assign(variable, value)`; `each`: the loop variable of a comprehension, which may be assigned."""
        positional = [argument for argument in call.args if argument.keyword is None]
        keywords = {argument.keyword.value: argument for argument in call.args if argument.keyword is not None}
        unknown = set(keywords) - {"ref", "value"} - set(_KEPT_KEYWORDS)
        if len(positional) > 2 or unknown:
            raise Refusal(call, f"{tf_name} with arguments other than (ref, value, use_locking, name) is not modelled")
        variable = positional[0].value if positional else getattr(keywords.get("ref"), "value", None)
        value = positional[1].value if len(positional) > 1 else getattr(keywords.get("value"), "value", None)
        is_element = each is not None and isinstance(variable, cst.Name) and variable.value == each
        if value is None or not (is_element or self._is_variable(variable)):
            raise Refusal(call, f"{tf_name} of '{code(variable) if variable is not None else '?'}', which is not "
                                f"a tf.Variable bound to a name in the graph code")
        kept = [keywords[name].with_changes(comma=cst.MaybeSentinel.DEFAULT) for name in _KEPT_KEYWORDS
                if name in keywords]
        return variable, assign_method(tf_name), [cst.Arg(value), *kept]

    def _is_variable(self, node: cst.BaseExpression | None) -> bool:
        return (isinstance(node, cst.Name) and self.scanner.kinds.get(node.value) is Kind.VARIABLE
                and self.scanner.resolver.is_block_reference(node))


def check_assignment_order(functions, block: GraphBlock, planner) -> list[tuple[cst.CSTNode, str]]:
    """Refuses a step function holding an assignment that other work of the same run reads or updates
    without a data path between them (TF1 ran them in any order), except weight clipping beside a train
    op (see _clips_trained_variables), converted with a finding. Returns the findings."""
    notes = []
    for function in functions:
        for index in function.items:
            if index in block.assigns:
                notes += _check_assignment(function, index, block, planner)
    return notes


def _check_assignment(function, index: int, block: GraphBlock, planner) -> list[tuple[cst.CSTNode, str]]:
    variables, item = block.assigns[index], block.items[index]
    name = item.defines[0]
    before = planner.upstream(index)
    fetched = sorted(set(variables) & function.sites[0].reads)
    if fetched:
        raise Refusal(item.node, f"'{fetched[0]}' is fetched in the same session run as its assignment '{name}': "
                                 "TF1 fixes no order between them")
    notes = []
    ordered = before
    if function.train_op is not None:
        if _clips_trained_variables(function, index, before, block, planner):
            function.before_tape = sorted(set(function.before_tape) | before | {index})
            ordered = before | set(function.loss_slice)
            _fetched_for_effect(function, name)
            notes.append((item.node, _clipping_note(name, function.train_op.name)))
        else:
            _check_beside_train_op(function, index, before, block, planner)
    work = list(function.items) + ([block.last_definition(function.train_op.name)] if function.train_op else [])
    for other in work:
        if other == index or other in ordered:
            continue
        clash = sorted(set(variables) & planner.reads_of(other))
        if clash:
            raise Refusal(item.node, f"'{_label(block, other)}' reads '{clash[0]}' in the same session run as its "
                                     f"assignment '{name}' without depending on it: TF1 fixes no order between them")
    return notes


def _clips_trained_variables(function, index: int, before: set[int], block: GraphBlock, planner) -> bool:
    """An assignment computed from its variables alone (WGAN's `clip_D`), run with a train op that
    updates them. TF1 fixed no order between the two, and its executor's varied: the loss read the
    variables before the assignment in some steps and after it in others, of the same program; the
    update came after it. The step function makes the assignment first (with the variable lists it
    reads), then computes the loss and applies the gradients: the loss and the update see the
    assigned values."""
    variables = set(block.assigns[index])
    definition = block_definition(block)
    only_lists = all(item.defines and listed_names(cst.Name(item.defines[0]), definition) is not None
                     for item in (block.items[i] for i in before))
    updated = _updated_by_train_op(function, block, planner)
    return only_lists and index not in function.loss_slice and variables <= updated


def _fetched_for_effect(function, name: str) -> None:
    """The step function could give the assigned values only as the update leaves them, where TF1's run
    gave them as assigned: its sites may fetch the assignment for its effect alone
    (callsites.choose_returns refuses the others)."""
    function.effects.add(name)
    for site in function.sites:
        for leaf in site.fetch.leaves():
            if isinstance(leaf.node, cst.Name) and leaf.node.value == name:
                leaf.shape = "op"


def _clipping_note(name: str, train_op: str) -> str:
    return (f"'{name}' and train op '{train_op}' ran in one session run, in an order TF1 did not fix (its loss read "
            "the variables before the assignments in some steps and after them in others): the step makes the "
            "assignments first, then computes the loss and applies the gradients; verify compares the two")


def _check_beside_train_op(function, index: int, before: set[int], block: GraphBlock, planner) -> None:
    variables, item = block.assigns[index], block.items[index]
    train_op = function.train_op
    if index in function.loss_slice:
        raise Refusal(item.node, f"the loss of train op '{train_op.name}' depends on the assignment "
                                 f"'{item.defines[0]}'")
    read = set().union(*(planner.reads_of(i) for i in before | {index}))
    clash = sorted((read | set(variables)) & _updated_by_train_op(function, block, planner))
    if clash:
        raise Refusal(item.node, f"the assignment '{item.defines[0]}' runs in the same session run as train op "
                                 f"'{train_op.name}', which updates {', '.join(repr(n) for n in clash)}: TF1 "
                                 "fixes no order between them")


def _updated_by_train_op(function, block: GraphBlock, planner) -> set[str]:
    """What the function's train op writes: the trainable state its loss reads, its var_list (the
    names it reads, and the variables it lists through them), its global step."""
    train_op = function.train_op
    updated = set(planner.trainable(function)) | {train_op.global_step} - {None}
    if train_op.var_list is not None:
        updated |= {node.value for node in load_names(train_op.var_list)}
        updated |= set(listed_names(train_op.var_list, block_definition(block)) or ())
    return updated


def _label(block: GraphBlock, index: int) -> str:
    item = block.items[index]
    return ", ".join(item.defines) if item.defines else code(item.node).strip()
