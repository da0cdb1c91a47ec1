"""TFM310: run every epoch of a loop around a fused step loop in one graph.

    for epoch in range(EPOCHS):                                   train_step_epochs_outputs = train_step_loop_epochs(EPOCHS, 0, n, x, y)
        losses = []                                               for epoch in range(EPOCHS):
        train_step_outputs = train_step_loop(0, n, x, y)   ->         losses = []
        ...  # plain Python on the outputs                            train_step_outputs = [None, train_step_epochs_outputs[1][epoch]]
                                                                      ...

After TFM301 an epoch loop calls its multi-step function once per epoch; with a few steps per
epoch the fixed cost of that call (about a millisecond on a CPU) is most of the epoch. When every
epoch feeds it the same values (nothing the call reads is bound in the epoch loop) and the rest of
the epoch is plain Python on the outputs, the epochs are independent of that Python work: they run
first, in one call of `S_loop_epochs` (a `tf.range` over epochs calling `S_loop`, each output
stacked by epoch), and each epoch then reads its own rows, in the same order as before.

The epoch loop must be `for e in range(n)` (no else, no early exit, `e` never rebound) with one
statement calling the multi-step function; anything else that reads TensorFlow state or might
change the arrays fed to the steps leaves the loop as it is, with a warning saying why.
"""
from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from transforms._fusion_body import fed_arrays_problem, plain_python_problem
from transforms._fusion_names import (
    LOOP_SUFFIX,
    epochs_function_name,
    epochs_outputs_name,
    outputs_name,
    rows_name,
)
from transforms._fusion_scan import calls_in, leaving_statement, names_bound, names_read
from transforms._fusion_state import ModuleFacts, collect_facts
from transforms._graph_syntax import Refusal, code, walk
from transforms.base import TFTransform
from transforms.fuse_step_loops import assignments_of, literal_integer, reads_outside_rebinding_loops


GRAPH_LOCALS = frozenset({"epochs", "epoch", "outputs", "epoch_outputs"})  # the epochs function's own names


class FuseEpochLoops(TFTransform):
    CODE = "TFM310"
    DESCRIPTION = "Run the epochs of a loop around a fused step loop in one graph when each feeds it the same arrays"
    PHASE = 31  # after TFM301 wrote the multi-step functions
    TRIGGERS = (LOOP_SUFFIX + "(",)

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node
        self.facts: ModuleFacts = collect_facts(node, self.tf_names, self._qualified)
        self.multi_step = {f.name.value: f for f in walk(node) if isinstance(f, cst.FunctionDef)
                           and _step_name(f.name.value) in self.facts.steps}
        self.taken = {n.value for n in walk(node) if isinstance(n, cst.Name)}
        self.plans: dict[cst.For, EpochPlan] = {}
        for loop in (n for n in walk(node) if isinstance(n, cst.For)):
            self._plan(loop)
        self.defined_after = {plan.function.name.value: plan for plan in self.plans.values()}

    def _qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def _plan(self, loop: cst.For) -> None:
        found = [(s, c) for s in loop.body.body for c in calls_in(s) if _callee(c) in self.multi_step]
        if not any(isinstance(s, cst.SimpleStatementLine) for s, _ in found):
            return  # no multi-step call of its own: an outer loop, or one with the call under an `if`
        try:
            plan = self._checked(loop, found)
        except Refusal as refusal:
            self.report(refusal.node or loop, f"epoch loop kept in Python: {refusal.message}", fixed=False,
                        severity="warning")
            return
        if plan.function.name.value in {p.function.name.value for p in self.plans.values()}:
            self.report(loop, "epoch loop kept in Python: another epoch loop already runs this multi-step function",
                        fixed=False, severity="warning")
            return
        self.taken |= {plan.epochs_name, plan.outputs_name}
        self.plans[loop] = plan
        self.report(loop, f"epoch loop of {plan.function.name.value}() calls -> one call of {plan.epochs_name}()",
                    fixed=True)

    def _checked(self, loop: cst.For, found) -> EpochPlan:
        statement, call = found[0]
        if len(found) > 1:
            raise Refusal(found[1][1], "the epoch loop calls a multi-step function more than once")
        if loop.orelse is not None or loop.asynchronous is not None or not isinstance(loop.target, cst.Name):
            raise Refusal(loop, "the epoch loop has an else clause, is async or unpacks its target")
        if not _single_range(loop.iter):
            raise Refusal(loop, "the epoch loop does not run over range(n)")
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or \
                not _holds_call(statement.body[0], call):
            raise Refusal(statement, "the multi-step call is not a statement of its own")
        if any(a.star or a.keyword for a in call.args):
            raise Refusal(call, "the multi-step call passes keyword or unpacked arguments")
        body = list(loop.body.body)
        leaving = leaving_statement(body)
        if leaving is not None:
            raise Refusal(leaving, "the epoch loop may leave early; the epochs could not all run first")
        epoch = loop.target.value
        bound = names_bound(body)
        if epoch in bound:
            raise Refusal(loop, f"the epoch loop rebinds `{epoch}`")
        changed = sorted((set(names_read(call)) | set(names_read(loop.iter))) & (bound | {epoch}))
        if changed:
            raise Refusal(call, f"`{changed[0]}`, which the multi-step call reads, changes from epoch to epoch")
        function = self.multi_step[_callee(call)]
        step = _step_name(function.name.value)
        rest = [s for s in body if s is not statement and not _binds(s, rows_name(step))]
        fed = {a.value.value for a in call.args if isinstance(a.value, cst.Name)}
        # the steps' outputs are tensors, not state; what the call is fed replaced feed_dict values
        state = (self.facts.state | (self.facts.opaque - bound)) - {outputs_name(step), rows_name(step)} - fed
        problem = plain_python_problem(rest, state, self.facts.call_problem, self.facts.logs) or \
            fed_arrays_problem(rest, fed)
        if problem:
            raise Refusal(loop, problem.replace("loop body", "epoch loop"))
        assigned = isinstance(statement.body[0], cst.Assign)
        structure = _returned(function)
        if assigned and structure is None:
            raise Refusal(function, f"the outputs of {function.name.value}() are not a structure of stacked tensors")
        if not rest and reads_outside_rebinding_loops(self.module, epoch) > 0:
            raise Refusal(loop, f"no Python work is left in the epoch loop, but `{epoch}` is used after it")
        clash = sorted(p.name.value for p in function.params.params if p.name.value in GRAPH_LOCALS
                       or p.name.value.startswith("epoch_"))
        if clash:
            raise Refusal(function, f"{function.name.value}() has a parameter `{clash[0]}`, a name its epoch loop uses")
        epochs_name, outputs = epochs_function_name(step), epochs_outputs_name(step)
        clash = sorted({epochs_name, outputs} & self.taken)
        if clash:
            raise Refusal(loop, f"the name `{clash[0]}` it would define is already used")
        return EpochPlan(function, structure, call, statement, assigned, bool(rest), epochs_name, outputs,
                         self._epoch_count(loop.iter.args[0].value))

    def _epoch_count(self, count: cst.BaseExpression) -> str:
        value = literal_integer(count, self._constant)
        return code(count) if value is not None and value >= 0 else f"max({code(count)}, 0)"

    def _constant(self, name: str) -> int | None:
        """The integer a name always holds: its one binding in the module is `NAME = <integer literal>`."""
        found = assignments_of(self.module, name)
        if len(found) == 1 and found[0] is not None and isinstance(found[0].value, cst.Integer):
            return found[0].value.evaluated_value
        return None

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        plan = self.defined_after.get(original.name.value)
        if plan is None or original is not plan.function:
            return updated
        self.add_import("tensorflow", asname="tf")
        epochs = cst.parse_module(epochs_function(plan, "tf")).body[0]
        gap = [cst.EmptyLine(indent=False)] * (2 if original in self.module.body else 1)
        return cst.FlattenSentinel([updated, epochs.with_changes(leading_lines=gap)])

    def leave_For(self, original: cst.For, updated: cst.For):
        plan = self.plans.get(original)
        if plan is None:
            return updated
        args = ", ".join(code(a.value) for a in plan.call.args)
        call = f"{plan.epochs_name}({plan.epoch_count}, {args})"
        first = cst.parse_statement((f"{plan.outputs_name} = {call}" if plan.assigned else call) + "\n")
        first = first.with_changes(leading_lines=original.leading_lines)
        if not plan.rest:
            return first
        index = original.body.body.index(plan.statement)
        body = list(updated.body.body)
        if plan.assigned:
            target = code(plan.statement.body[0].targets[0].target)
            row = epoch_row(plan.structure, plan.outputs_name, original.target.value)
            body[index] = body[index].with_changes(body=[cst.parse_statement(f"{target} = {row}\n").body[0]])
        else:
            del body[index]
        loop = updated.with_changes(body=updated.body.with_changes(body=body), leading_lines=[])
        return cst.FlattenSentinel([first, loop])


class EpochPlan:
    def __init__(self, function, structure, call, statement, assigned, rest, epochs_name, outputs_name, epoch_count):
        self.function: cst.FunctionDef = function
        self.structure: cst.BaseExpression | None = structure  # what `function` returns, None: nothing
        self.call: cst.Call = call
        self.statement: cst.SimpleStatementLine = statement
        self.assigned: bool = assigned  # `S_outputs = S_loop(...)` rather than `S_loop(...)`
        self.rest: bool = rest  # the epoch loop does Python work besides the call
        self.epochs_name, self.outputs_name, self.epoch_count = epochs_name, outputs_name, epoch_count


def epochs_function(plan: EpochPlan, tf: str) -> str:
    """Source of `S_loop_epochs(epochs, first, stop, ...)`: `S_loop` run `epochs` times in one graph."""
    function = plan.function
    decorator = next(d.decorator for d in function.decorators if isinstance(d.decorator, cst.Call))
    signature = next(a.value for a in decorator.args if a.keyword and a.keyword.value == "input_signature")
    specs = "".join(f"    {code(e.value)},\n" for e in signature.elements)
    params = [p.name.value for p in function.params.params]
    name = function.name.value
    leaves = _leaves(plan.structure)
    lines = [f"@{tf}.function(input_signature=[\n    {tf}.TensorSpec([], {tf}.int32),\n{specs}])",
             f"def {plan.epochs_name}(epochs, {', '.join(params)}):",
             f'    """Runs `{name}` `epochs` times in one graph, the same steps each time'
             + ('; outputs stacked by epoch."""' if leaves else '."""')]
    if leaves:
        lines.append(f"    outputs = {name}.get_concrete_function().structured_outputs")
        lines += [f"    epoch_{j} = {tf}.TensorArray(outputs{key}.dtype, size=epochs, element_shape=outputs{key}.shape)"
                  for j, key in enumerate(leaves)]
    lines.append(f"    for epoch in {tf}.range(epochs):")
    if leaves:
        lines.append(f"        epoch_outputs = {name}({', '.join(params)})")
        lines += [f"        epoch_{j} = epoch_{j}.write(epoch, epoch_outputs{key})" for j, key in enumerate(leaves)]
        stacked = iter(f"epoch_{j}.stack()" for j in range(len(leaves)))
        lines.append(f"    return {_rebuilt(plan.structure, lambda: next(stacked))}")
    else:
        lines.append(f"        {name}({', '.join(params)})")
    return "\n".join(lines) + "\n"


def epoch_row(structure: cst.BaseExpression, outputs: str, epoch: str) -> str:
    """The multi-step outputs of epoch `epoch`, in the structure `S_loop` returns them."""
    keys = iter(_leaves(structure))
    return _rebuilt(structure, lambda: f"{outputs}{next(keys)}[{epoch}]")


def _leaves(structure: cst.BaseExpression | None, key: str = "") -> list[str]:
    """Subscript paths (`[1]`, `[0][2]`) of the stacked tensors in a returned structure."""
    if structure is None or _is_none(structure):
        return []
    if isinstance(structure, (cst.List, cst.Tuple)):
        return [leaf for j, e in enumerate(structure.elements) for leaf in _leaves(e.value, f"{key}[{j}]")]
    return [key]


def _rebuilt(structure: cst.BaseExpression, leaf) -> str:
    if _is_none(structure):
        return "None"
    if isinstance(structure, cst.List):
        return "[" + ", ".join(_rebuilt(e.value, leaf) for e in structure.elements) + "]"
    if isinstance(structure, cst.Tuple):
        inner = [_rebuilt(e.value, leaf) for e in structure.elements]
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    return leaf()


def _returned(function: cst.FunctionDef) -> cst.BaseExpression | None:
    """What the multi-step function returns when it is a (nested) list/tuple of `x.stack()` and None."""
    last = function.body.body[-1]
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)
            and last.body[0].value is not None):
        return None
    value = last.body[0].value
    return value if _stacked_structure(value) else None


def _stacked_structure(node: cst.BaseExpression) -> bool:
    if _is_none(node):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(isinstance(e, cst.Element) and _stacked_structure(e.value)
                                           for e in node.elements)
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "stack"
            and not node.args and isinstance(node.func.value, cst.Name))


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _step_name(name: str) -> str | None:
    return name[: -len(LOOP_SUFFIX)] if name.endswith(LOOP_SUFFIX) else None


def _callee(call: cst.Call) -> str | None:
    return call.func.value if isinstance(call.func, cst.Name) else None


def _single_range(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"
            and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star)


def _holds_call(small: cst.BaseSmallStatement, call: cst.Call) -> bool:
    if isinstance(small, cst.Expr):
        return small.value is call
    return (isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name))


def _binds(statement: cst.BaseStatement, name: str) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
        isinstance(statement.body[0], cst.Assign) and name in names_bound([statement])



